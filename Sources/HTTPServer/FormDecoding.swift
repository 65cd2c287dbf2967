/// Decoding of `application/x-www-form-urlencoded` bodies (WHATWG URL standard,
/// "application/x-www-form-urlencoded parsing"): `name=value` pairs split on `&`, `+` a
/// space, `%HH` a byte; the bytes then read as UTF-8. Total: any bytes give a dictionary
/// (a malformed `%` escape is kept as it is, bytes that are not UTF-8 become U+FFFD).
public enum FormDecoding {
    /// The most pairs read from one body; the rest are ignored.
    public static let maximumFields = 64

    /// The fields of `body`; the first value of a repeated name wins.
    public static func fields(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        var count = 0
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            guard count < maximumFields else { break }
            count += 1
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(parts[0])
            let value = parts.count > 1 ? decode(parts[1]) : ""
            if fields[name] == nil { fields[name] = value }
        }
        return fields
    }

    /// One name or value: `+` is a space, `%HH` a byte.
    static func decode(_ bytes: ArraySlice<UInt8>) -> String {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                decoded.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), bytes.endIndex - index >= 3,
                let high = PathUnescaping.hexValue(bytes[index + 1]), let low = PathUnescaping.hexValue(bytes[index + 2])
            {
                decoded.append(high << 4 | low)
                index += 3
                continue
            } else {
                decoded.append(byte)
            }
            index += 1
        }
        return String(decoding: decoded, as: UTF8.self)
    }
}
