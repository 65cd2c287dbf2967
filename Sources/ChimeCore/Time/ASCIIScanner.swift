/// A cursor over the ASCII bytes of a string, for the small fixed grammars of this folder.
struct ASCIIScanner {
    private let bytes: [UInt8]
    private(set) var position = 0

    init(_ text: String) {
        bytes = Array(text.utf8)
    }

    var isAtEnd: Bool { position == bytes.count }
    var peek: UInt8? { isAtEnd ? nil : bytes[position] }

    /// Consumes exactly `count` decimal digits and returns their value, or consumes nothing.
    mutating func digits(_ count: Int) -> Int? {
        guard bytes.count - position >= count else { return nil }
        var value = 0
        for byte in bytes[position..<position + count] {
            guard byte.isASCIIDigit else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        position += count
        return value
    }

    /// Consumes the next byte when it is one of `choices`.
    mutating func consume(_ choices: UInt8...) -> Bool {
        guard let next = peek, choices.contains(next) else { return false }
        position += 1
        return true
    }

    /// Consumes the longest run of bytes matching `predicate` and returns them.
    mutating func consumeRun(while predicate: (UInt8) -> Bool) -> ArraySlice<UInt8> {
        let start = position
        while let next = peek, predicate(next) { position += 1 }
        return bytes[start..<position]
    }
}

extension UInt8 {
    var isASCIIDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
    var isASCIILetter: Bool { (self | 0x20) >= UInt8(ascii: "a") && (self | 0x20) <= UInt8(ascii: "z") }
}
