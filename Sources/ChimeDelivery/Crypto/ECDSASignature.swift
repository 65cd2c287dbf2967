/// Converts ECDSA signatures between DER (`ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }`,
/// RFC 3279 §2.2.3, what OpenSSL makes and takes) and JWS's raw form, `r || s` each
/// left-padded to the curve's size (RFC 7518 §3.4). Both directions are total: malformed
/// input answers `nil`.
enum ECDSASignature {
    /// The raw `r || s` (2 × `coordinateBytes`) of a DER signature; `nil` when the bytes are not
    /// exactly one such SEQUENCE or an integer does not fit.
    static func raw(fromDER der: [UInt8], coordinateBytes: Int) -> [UInt8]? {
        var reader = DERReader(bytes: der[...])
        guard let sequence = reader.read(tag: 0x30), reader.isAtEnd else { return nil }
        var inner = DERReader(bytes: sequence)
        guard let r = inner.read(tag: 0x02), let s = inner.read(tag: 0x02), inner.isAtEnd,
            let paddedR = leftPadded(r, to: coordinateBytes), let paddedS = leftPadded(s, to: coordinateBytes)
        else { return nil }
        return paddedR + paddedS
    }

    /// The DER form of a raw `r || s`; `nil` when `raw` is not 2 × `coordinateBytes` long or
    /// `coordinateBytes` is over 125 (lengths here are short-form only).
    static func der(fromRaw raw: [UInt8], coordinateBytes: Int) -> [UInt8]? {
        guard coordinateBytes > 0, coordinateBytes <= 60, raw.count == 2 * coordinateBytes else { return nil }
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var magnitude = Array(bytes.drop { $0 == 0 })
            // A set high bit would read as negative: DER INTEGERs are two's complement.
            if magnitude.isEmpty || magnitude[0] & 0x80 != 0 { magnitude.insert(0, at: 0) }
            return [0x02, UInt8(magnitude.count)] + magnitude
        }
        let body = integer(raw.prefix(coordinateBytes)) + integer(raw.suffix(coordinateBytes))
        return [0x30, UInt8(body.count)] + body
    }

    /// An unsigned big-endian integer's bytes left-padded to `size`: DER's leading zero
    /// dropped; `nil` when it is longer than `size`, empty, or negative.
    private static func leftPadded(_ integer: ArraySlice<UInt8>, to size: Int) -> [UInt8]? {
        guard let first = integer.first, first & 0x80 == 0 else { return nil }
        let magnitude = integer.drop { $0 == 0 }
        guard magnitude.count <= size else { return nil }
        return [UInt8](repeating: 0, count: size - magnitude.count) + magnitude
    }
}

/// Reads DER tag-length-value items from bytes, refusing anything malformed.
struct DERReader {
    var bytes: ArraySlice<UInt8>

    var isAtEnd: Bool { bytes.isEmpty }

    /// The content of the next item when its tag is `tag`; `nil` (and nothing consumed) for
    /// another tag, a truncated item or a length over 65,535 bytes.
    mutating func read(tag: UInt8) -> ArraySlice<UInt8>? {
        var rest = bytes
        guard rest.popFirst() == tag, let first = rest.popFirst() else { return nil }
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count >= 1, count <= 2, rest.count >= count else { return nil }
            for _ in 0..<count {
                guard let byte = rest.popFirst() else { return nil }
                length = length << 8 | Int(byte)
            }
        }
        guard rest.count >= length else { return nil }
        let content = rest.prefix(length)
        bytes = rest.dropFirst(length)
        return content
    }
}
