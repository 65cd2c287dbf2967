import Foundation

/// The raw bytes of each element of one array inside a JSON document, found without decoding
/// the elements: `chime list --all-pages --json` prints each listing of a page as the
/// coordinator wrote it (the elements are already `WireCodec`'s output), so the client spends
/// no time decoding and re-encoding reminders.
///
/// Total over any bytes: the elements, or `nil` when the key is absent, not followed by an
/// array, or the array is not well formed (unbalanced brackets, an unterminated string).
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
        var elements: [Data] = []
        var depth = 0
        var isInString = false
        var isEscaped = false
        var elementStart: Int?
        var index = start + needle.count
        while index < bytes.count {
            let byte = bytes[index]
            if isInString {
                if isEscaped {
                    isEscaped = false
                } else if byte == UInt8(ascii: "\\") {
                    isEscaped = true
                } else if byte == UInt8(ascii: "\"") {
                    isInString = false
                }
                index += 1
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                break
            case UInt8(ascii: "\""):
                isInString = true
                if elementStart == nil { elementStart = index }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                if elementStart == nil { elementStart = index }
            case UInt8(ascii: "}"):
                guard depth > 0 else { return nil }
                depth -= 1
            case UInt8(ascii: "]"):
                if depth == 0 {
                    if let first = elementStart { elements.append(trimmed(bytes, first, index)) }
                    return elements
                }
                depth -= 1
            case UInt8(ascii: ","):
                if depth == 0 {
                    guard let first = elementStart else { return nil }
                    elements.append(trimmed(bytes, first, index))
                    elementStart = nil
                }
            default:
                if elementStart == nil { elementStart = index }
            }
            index += 1
        }
        return nil
    }

    /// `bytes[start..<end]` without trailing JSON whitespace.
    private static func trimmed(_ bytes: [UInt8], _ start: Int, _ end: Int) -> Data {
        var end = end
        while end > start, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[end - 1]) { end -= 1 }
        return Data(bytes[start..<end])
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
