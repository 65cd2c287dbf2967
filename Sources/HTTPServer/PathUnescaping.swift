/// Percent-decoding of a request target (RFC 3986 §2.1) as libmicrohttpd's unescape
/// callback, except that `%00` stays as it is.
///
/// libmicrohttpd's own decoder turns `%00` into a NUL byte and hands the path on as a C
/// string, so `/metrics%00junk` read as `/metrics` and answered 200. Kept literal, the path
/// matches no route and gets 404.
enum PathUnescaping {
    /// Decodes each `%HH` (two hexadecimal digits, either case) of `bytes` in place into one
    /// byte, except `%00`; every other byte, a `%` without two digits after it included, is
    /// kept. Total over any bytes.
    /// - Returns: the decoded length, at most `bytes.count`; the bytes after it are unchanged.
    static func decodeInPlace(_ bytes: UnsafeMutableRawBufferPointer) -> Int {
        var read = 0
        var written = 0
        while read < bytes.count {
            if bytes[read] == UInt8(ascii: "%"), read + 2 < bytes.count,
                let high = hexValue(bytes[read + 1]), let low = hexValue(bytes[read + 2]), high | low != 0
            {
                bytes[written] = high << 4 | low
                read += 3
            } else {
                bytes[written] = bytes[read]
                read += 1
            }
            written += 1
        }
        return written
    }

    /// The value of one hexadecimal digit (either case), or `nil`.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
