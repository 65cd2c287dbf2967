/// A strict JSON (RFC 8259) cursor over UTF-8 bytes, for fast paths that decode a few known
/// shapes and leave everything else to `JSONDecoder`.
///
/// Every method throws ``Unsupported`` for input it does not take: malformed JSON, and valid
/// JSON it does not handle (nesting deeper than ``maximumDepth``, a lone surrogate escape).
/// A caller then falls back to `JSONDecoder`, which decides and words the error. Reads check
/// bounds before every access, so no input traps. The bytes must outlive the reader.
struct FastJSONReader {
    /// The input leaves what the fast path handles; fall back to `JSONDecoder`.
    struct Unsupported: Error {}

    /// The kind of the next value, from its first byte.
    enum ValueKind {
        case object, array, string, number, boolean, null
    }

    /// An open object or array: whether a member was read, so the next one needs a comma.
    struct Container {
        fileprivate var hasMembers = false
    }

    /// An object key, matched against names with `case "name":`; keys with escapes are
    /// decoded first.
    struct Key {
        fileprivate var raw: UnsafeBufferPointer<UInt8>
        fileprivate var unescaped: String?

        static func ~= (name: StaticString, key: Key) -> Bool {
            let expected = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
            if let unescaped = key.unescaped { return unescaped.utf8.elementsEqual(expected) }
            return key.raw.count == expected.count && key.raw.elementsEqual(expected)
        }
    }

    /// The deepest nesting of objects and arrays read; deeper input is unsupported.
    static let maximumDepth = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var depth = 0

    /// A reader at the start of `bytes`.
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The kind of the next value, without consuming it.
    mutating func nextValueKind() throws(Unsupported) -> ValueKind {
        switch try peekToken() {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .boolean
        case UInt8(ascii: "n"): return .null
        default: throw Unsupported()
        }
    }

    /// Consumes a `null` and returns `true`, or consumes nothing and returns `false`.
    mutating func consumeNull() throws(Unsupported) -> Bool {
        guard try peekToken() == UInt8(ascii: "n") else { return false }
        try consumeLiteral("null")
        return true
    }

    /// Reads `true` or `false`.
    mutating func readBool() throws(Unsupported) -> Bool {
        switch try peekToken() {
        case UInt8(ascii: "t"):
            try consumeLiteral("true")
            return true
        case UInt8(ascii: "f"):
            try consumeLiteral("false")
            return false
        default:
            throw Unsupported()
        }
    }

    /// Consumes the `{` of an object; read its members with ``nextKey(in:)``.
    mutating func beginObject() throws(Unsupported) -> Container {
        try consumeToken(UInt8(ascii: "{"))
        try enterContainer()
        return Container()
    }

    /// The next key of `object` with its `:` consumed (read the value next), or `nil` once
    /// the closing `}` is consumed.
    mutating func nextKey(in object: inout Container) throws(Unsupported) -> Key? {
        guard try nextMember(of: &object, closedBy: UInt8(ascii: "}")) else { return nil }
        guard try peekToken() == UInt8(ascii: "\"") else { throw Unsupported() }
        position += 1
        let start = position
        let key: Key
        if try scanToClosingQuote() {
            key = Key(raw: slice(start..<position), unescaped: nil)
            position += 1
        } else {
            key = Key(raw: slice(start..<start), unescaped: try readEscapedString(from: start))
        }
        try consumeToken(UInt8(ascii: ":"))
        return key
    }

    /// The next key of `object` as a string (for dictionaries), its `:` consumed, or `nil`
    /// once the closing `}` is consumed.
    mutating func nextStringKey(in object: inout Container) throws(Unsupported) -> String? {
        guard try nextMember(of: &object, closedBy: UInt8(ascii: "}")) else { return nil }
        let key = try readString()
        try consumeToken(UInt8(ascii: ":"))
        return key
    }

    /// Consumes the `[` of an array; read its elements after each ``nextElement(in:)``.
    mutating func beginArray() throws(Unsupported) -> Container {
        try consumeToken(UInt8(ascii: "["))
        try enterContainer()
        return Container()
    }

    /// Whether `array` has another element (read it next); `false` once the closing `]` is
    /// consumed.
    mutating func nextElement(in array: inout Container) throws(Unsupported) -> Bool {
        try nextMember(of: &array, closedBy: UInt8(ascii: "]"))
    }

    /// Reads a string, decoding the escapes of RFC 8259 §7 (surrogate pairs included).
    /// Unsupported: raw control characters, invalid UTF-8, lone surrogates.
    mutating func readString() throws(Unsupported) -> String {
        try consumeToken(UInt8(ascii: "\""))
        let start = position
        guard try scanToClosingQuote() else { return try readEscapedString(from: start) }
        guard let text = Self.makeString(utf8: slice(start..<position)) else { throw Unsupported() }
        position += 1
        return text
    }

    /// Reads a string, or `null` as `nil`.
    mutating func readStringOrNull() throws(Unsupported) -> String? {
        try consumeNull() ? nil : try readString()
    }

    /// Reads a number in the grammar of RFC 8259 §6; convert it with the `Number` methods.
    mutating func readNumber() throws(Unsupported) -> Number {
        _ = try peekToken()
        let start = position
        _ = consume(UInt8(ascii: "-"))
        if !consume(UInt8(ascii: "0")) {
            guard let first = current, (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(first) else {
                throw Unsupported()
            }
            skipDigits()
        }
        var isInteger = true
        if consume(UInt8(ascii: ".")) {
            isInteger = false
            guard skipDigits() > 0 else { throw Unsupported() }
        }
        if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
            isInteger = false
            _ = consume(UInt8(ascii: "+")) || consume(UInt8(ascii: "-"))
            guard skipDigits() > 0 else { throw Unsupported() }
        }
        return Number(text: slice(start..<position), isInteger: isInteger)
    }

    /// Checks that only whitespace follows the value read.
    mutating func finish() throws(Unsupported) {
        skipWhitespace()
        guard position == bytes.count else { throw Unsupported() }
    }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private func slice(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[range])
    }

    private mutating func skipWhitespace() {
        while let byte = current,
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "\t")
        {
            position += 1
        }
    }

    /// The next byte after whitespace, not consumed.
    private mutating func peekToken() throws(Unsupported) -> UInt8 {
        skipWhitespace()
        guard let byte = current else { throw Unsupported() }
        return byte
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard current == byte else { return false }
        position += 1
        return true
    }

    private mutating func consumeToken(_ byte: UInt8) throws(Unsupported) {
        guard try peekToken() == byte else { throw Unsupported() }
        position += 1
    }

    private mutating func consumeLiteral(_ literal: StaticString) throws(Unsupported) {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard bytes.count - position >= expected.count,
            slice(position..<position + expected.count).elementsEqual(expected)
        else { throw Unsupported() }
        position += expected.count
    }

    /// Skips decimal digits and returns how many there were.
    @discardableResult
    private mutating func skipDigits() -> Int {
        let start = position
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { position += 1 }
        return position - start
    }

    private mutating func enterContainer() throws(Unsupported) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw Unsupported() }
    }

    /// Consumes the comma before a member, or the closing byte (then returns `false`).
    private mutating func nextMember(of container: inout Container, closedBy closing: UInt8) throws(Unsupported)
        -> Bool
    {
        if try peekToken() == closing {
            position += 1
            depth -= 1
            return false
        }
        if container.hasMembers { try consumeToken(UInt8(ascii: ",")) }
        container.hasMembers = true
        return true
    }

    /// Moves to the closing quote of a string (`true`) or to its first backslash (`false`).
    private mutating func scanToClosingQuote() throws(Unsupported) -> Bool {
        while let byte = current {
            if byte == UInt8(ascii: "\"") { return true }
            if byte == UInt8(ascii: "\\") { return false }
            guard byte >= 0x20 else { throw Unsupported() }
            position += 1
        }
        throw Unsupported()
    }

    /// Decodes the rest of a string that has escapes; `start` is its first byte, `position`
    /// its first backslash. Consumes the closing quote.
    private mutating func readEscapedString(from start: Int) throws(Unsupported) -> String {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(position - start + 16)
        var runStart = start
        while true {
            let isClosed = try scanToClosingQuote()
            utf8.append(contentsOf: slice(runStart..<position))
            position += 1
            if isClosed { break }
            try appendEscape(to: &utf8)
            runStart = position
        }
        guard let text = utf8.withUnsafeBufferPointer(Self.makeString(utf8:)) else { throw Unsupported() }
        return text
    }

    /// The text of `bytes`, or `nil` when they are not valid UTF-8.
    private static func makeString(utf8 bytes: UnsafeBufferPointer<UInt8>) -> String? {
        // ASCII is valid UTF-8 and `String(decoding:)` takes it on a fast path;
        // `String(validating:)` looked up generic metadata on every call in a profile.
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Appends the character of the escape after a backslash, as UTF-8.
    private mutating func appendEscape(to utf8: inout [UInt8]) throws(Unsupported) {
        guard let letter = current else { throw Unsupported() }
        position += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(letter)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var value = UInt32(try readHexQuad())
            if (0xD800...0xDBFF).contains(value) {
                try consumeLiteral("\\u")
                let low = UInt32(try readHexQuad())
                guard (0xDC00...0xDFFF).contains(low) else { throw Unsupported() }
                value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(value), let encoded = UTF8.encode(scalar) else { throw Unsupported() }
            utf8.append(contentsOf: encoded)
        default:
            throw Unsupported()
        }
    }

    private mutating func readHexQuad() throws(Unsupported) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw Unsupported() }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Unsupported()
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }
}

extension Optional {
    /// Stores the value of a key, refusing a key given twice: `JSONDecoder` keeps the first,
    /// and such input is left to it. For a key that may be `null`, `Wrapped` is itself optional.
    mutating func setOnce(_ value: Wrapped) throws(FastJSONReader.Unsupported) {
        guard self == nil else { throw FastJSONReader.Unsupported() }
        self = value
    }
}
