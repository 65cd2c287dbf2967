import Foundation

/// Base64 in its two alphabets (RFC 4648 §4 standard, §5 URL-safe): JWTs (RFC 7515 §2) use
/// URL-safe without padding; Standard Webhooks' secrets and signatures use standard with it.
public enum Base64 {
    /// `data` in the standard alphabet, padded with `=`.
    public static func encode(_ data: Data) -> String { data.base64EncodedString() }

    /// The bytes of standard base64 text, padding optional; `nil` for any other character,
    /// whitespace included, or an impossible length.
    public static func decode(_ text: String) -> Data? {
        guard text.utf8.allSatisfy(isStandardOrPadding) else { return nil }
        let unpadded = text.utf8.reversed().drop { $0 == UInt8(ascii: "=") }.count
        let padding = text.utf8.count - unpadded
        guard unpadded % 4 != 1, padding <= 2, !text.utf8.prefix(unpadded).contains(UInt8(ascii: "=")) else { return nil }
        let padded = String(text.prefix(unpadded)) + String(repeating: "=", count: (4 - unpadded % 4) % 4)
        return Data(base64Encoded: padded)
    }

    /// `data` in the URL-safe alphabet (`-` and `_` for `+` and `/`) without padding, as JWS
    /// (RFC 7515 §2, "base64url") spells every part.
    public static func encodeURL(_ data: Data) -> String {
        var text = data.base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// The bytes of base64url text (padding optional); `nil` for a character outside the
    /// URL-safe alphabet or an impossible length.
    public static func decodeURL(_ text: String) -> Data? {
        let isURLAlphabet: (UInt8) -> Bool = { byte in
            byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "=") || isAlphanumeric(byte)
        }
        guard text.utf8.allSatisfy(isURLAlphabet) else { return nil }
        return decode(text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/"))
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isStandardOrPadding(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
    }
}
