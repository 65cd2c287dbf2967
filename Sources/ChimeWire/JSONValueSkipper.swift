/// Finds where one JSON value ends from its structure alone, one byte at a time: strings
/// with their escapes, and the nesting of objects and arrays. What lies between (keys,
/// numbers, literals) is not checked: the decoder that reads each value does that, so a
/// malformed value still has an end and can be reported on its own.
///
/// The one value-skipping walk under ``JSONArrayElements`` (a whole document) and
/// ``JSONObjectSplitter`` (a stream fed in pieces, hence byte by byte). Total: every byte
/// gives a ``Step``; nesting is counted, not stored, so memory stays constant.
struct JSONValueSkipper {
    /// What a byte did to the value.
    enum Step: Equatable {
        /// The byte belongs to the value, which goes on.
        case inside
        /// The byte closes the value: the `}` or `]` back at the outer level, or the
        /// closing quote of a string value.
        case closed
        /// A number or literal ended just before this byte, which is not part of it.
        case endedBefore
        /// The byte cannot start a value (`}`, `]`, `,`, `:`) or closes more than was opened.
        case unexpected
    }

    private enum Shape { case notStarted, container, string, scalar }

    private var shape = Shape.notStarted
    /// Open objects and arrays.
    private(set) var depth = 0
    private var isInString = false
    private var isEscaped = false

    /// Whether a value has begun: its first byte was stepped.
    var hasStarted: Bool { shape != .notStarted }

    /// Ready for the next value.
    mutating func reset() { self = JSONValueSkipper() }

    /// Takes the next byte of the value. The first byte must not be whitespace (skip it
    /// before a value starts).
    mutating func step(_ byte: UInt8) -> Step {
        if isInString {
            if isEscaped {
                isEscaped = false
            } else if byte == UInt8(ascii: "\\") {
                isEscaped = true
            } else if byte == UInt8(ascii: "\"") {
                isInString = false
                if shape == .string { return .closed }
            }
            return .inside
        }
        switch shape {
        case .notStarted:
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                shape = .container
                depth = 1
            case UInt8(ascii: "\""):
                shape = .string
                isInString = true
            case UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ","), UInt8(ascii: ":"):
                return .unexpected
            default:
                shape = .scalar
            }
            return .inside
        case .scalar:
            return Self.endsScalar(byte) ? .endedBefore : .inside
        case .string:
            // A string value is closed by its quote above; nothing follows it.
            return .unexpected
        case .container:
            switch byte {
            case UInt8(ascii: "\""): isInString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return .closed }
            default: break
            }
            return .inside
        }
    }

    /// The end (exclusive) of the value whose first byte is `bytes[start]`, or `nil` when it
    /// starts with a byte no value starts with or is not finished before the bytes end.
    static func endOfValue(in bytes: [UInt8], from start: Int) -> Int? {
        var skipper = JSONValueSkipper()
        var index = start
        while index < bytes.count {
            switch skipper.step(bytes[index]) {
            case .inside: index += 1
            case .closed: return index + 1
            case .endedBefore: return index
            case .unexpected: return nil
            }
        }
        return nil
    }

    /// The first index from `start` on that is not JSON whitespace (`bytes.count` if none).
    static func skippingWhitespace(in bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index < bytes.count, isWhitespace(bytes[index]) { index += 1 }
        return index
    }

    /// JSON whitespace (RFC 8259 §2).
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// Whitespace or a structural byte: where a number or literal ends.
    private static func endsScalar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ":"), UInt8(ascii: "{"),
            UInt8(ascii: "["), UInt8(ascii: "\""):
            true
        default: isWhitespace(byte)
        }
    }
}
