import Foundation

/// The raw bytes of each element of one array inside a JSON document, found without decoding
/// the elements: `chime list --all-pages --json` prints each listing of a page as the
/// coordinator wrote it (the elements are already `WireCodec`'s output), so the client spends
/// no time decoding and re-encoding reminders.
///
/// Total over any bytes: the elements, or `nil` when the key is absent, not followed by an
/// array, or the array is not well formed (unbalanced brackets, an unterminated string, a
/// missing comma). Each element's end is found by ``JSONValueSkipper``.
public enum JSONArrayElements {
    /// The elements of the array that is the value of the first `"key":[` in `document`.
    ///
    /// In JSON every quote inside a string is escaped, so `"key":[` occurs outside strings
    /// only; the first occurrence is the key that comes first in the document (with
    /// `WireCodec`'s sorted keys, `result.reminders` of a `list` reply, since `ok`, `requestId`
    /// and `result.nextCursor` hold no array).
    public static func elements(ofFirst key: String, in document: Data) -> [Data]? {
        let bytes = [UInt8](document)
        let needle = [UInt8](#""\#(key)":["#.utf8)
        guard let start = firstIndex(of: needle, in: bytes) else { return nil }
        var index = JSONValueSkipper.skippingWhitespace(in: bytes, from: start + needle.count)
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "]") { return [] }
        var elements: [Data] = []
        while true {
            index = JSONValueSkipper.skippingWhitespace(in: bytes, from: index)
            guard let end = JSONValueSkipper.endOfValue(in: bytes, from: index) else { return nil }
            elements.append(Data(bytes[index..<end]))
            index = JSONValueSkipper.skippingWhitespace(in: bytes, from: end)
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): return elements
            default: return nil
            }
        }
    }

    private static func firstIndex(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard !needle.isEmpty, bytes.count >= needle.count else { return nil }
        var index = 0
        while index <= bytes.count - needle.count {
            if bytes[index] == needle[0] && bytes[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}
