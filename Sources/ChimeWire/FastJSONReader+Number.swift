import ChimeCore

extension FastJSONReader {
    /// Reads a number as `JSONDecoder` decodes an `Int` (see ``Number/integerValue()``).
    mutating func readInt() throws(Unsupported) -> Int {
        guard let value = Int(exactly: try readNumber().integerValue()) else { throw Unsupported() }
        return value
    }

    /// Reads a number as `JSONDecoder` decodes a `Double` (see ``Number/doubleValue()``).
    mutating func readDouble() throws(Unsupported) -> Double {
        try readNumber().doubleValue()
    }

    /// Reads seconds as ChimeCore's `decodeSeconds` does: a number, or a duration string such
    /// as `"10m"` (`DurationParser`); unsupported where that would throw.
    mutating func readSeconds() throws(Unsupported) -> Double {
        switch try nextValueKind() {
        case .number:
            return try readDouble()
        case .string:
            let text = try readString()
            guard let seconds = try? DurationParser.parseSeconds(text) else { throw Unsupported() }
            return seconds
        default:
            throw Unsupported()
        }
    }

    /// A number literal as read, converted on demand exactly as `JSONDecoder` (swift-foundation)
    /// converts it for the type asked; a conversion it might not match is ``Unsupported``.
    struct Number {
        /// The literal's bytes, RFC 8259 §6 grammar.
        var text: UnsafeBufferPointer<UInt8>
        /// Whether the literal has neither a fraction nor an exponent.
        var isInteger: Bool

        /// The value `JSONDecoder` gives an `Int` or `Int64`: a plain integer exactly; any other
        /// literal through its nearest Double when that is a whole number below 2^53 in
        /// magnitude (`1.0` is 1, `1e-400` is 0, `0.5` fails).
        ///
        /// Unsupported: integers outside Int64, non-whole values, and whole values from 2^53 up
        /// written with a fraction or exponent (`JSONDecoder` re-reads those as a `Decimal`).
        func integerValue() throws(Unsupported) -> Int64 {
            if isInteger {
                guard let value = exactInteger() else { throw Unsupported() }
                return value
            }
            let value = try nearestDouble()
            guard value.rounded(.towardZero) == value, value.magnitude < 0x1p53 else { throw Unsupported() }
            return Int64(value)
        }

        /// The value `JSONDecoder` gives a `Double`: the nearest Double, `-0` staying negative.
        ///
        /// Unsupported: literals beyond Double's range and nonzero literals that round to zero
        /// (`1e-400`), both of which `JSONDecoder` refuses.
        func doubleValue() throws(Unsupported) -> Double {
            let isNegative = text.first == UInt8(ascii: "-")
            // Up to 15 digits a whole number converts exactly, with no text parsing.
            if isInteger, text.count - (isNegative ? 1 : 0) <= 15 {
                var magnitude: Int64 = 0
                for byte in text where byte != UInt8(ascii: "-") {
                    magnitude = magnitude * 10 + Int64(byte - UInt8(ascii: "0"))
                }
                return isNegative ? -Double(magnitude) : Double(magnitude)
            }
            let value = try nearestDouble()
            guard value.isFinite, value != 0 || !hasNonzeroSignificand else { throw Unsupported() }
            return value
        }

        /// What `PropertyListValue.init(from:)` makes: `.integer` where `JSONDecoder` reads an
        /// `Int64` (see ``integerValue()``), otherwise `.real` with the nearest Double.
        ///
        /// Unsupported: literals beyond Double's range, and whole values from 2^53 up to what
        /// an Int64 holds written with a fraction or exponent (or below −2^63 without), which
        /// `JSONDecoder` re-reads as a `Decimal`.
        func propertyListValue() throws(Unsupported) -> PropertyListValue {
            if isInteger, let value = exactInteger() { return .integer(value) }
            let value = try nearestDouble()
            guard value.isFinite else { throw Unsupported() }
            // JSONDecoder's Int64 fails on a fraction and on a whole number no Int64 holds
            // (then the value is a real); in between it consults a Decimal, left to it.
            guard value.rounded(.towardZero) == value, Int64(exactly: value) != nil else { return .real(value) }
            guard value.magnitude < 0x1p53 else { throw Unsupported() }
            return .integer(Int64(value))
        }

        /// The plain integer's exact value; `nil` when it does not fit an Int64.
        private func exactInteger() -> Int64? {
            let isNegative = text.first == UInt8(ascii: "-")
            var magnitude: UInt64 = 0
            for byte in text where byte != UInt8(ascii: "-") {
                let (shifted, overflowedShift) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflowedSum) = shifted.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                guard !overflowedShift, !overflowedSum else { return nil }
                magnitude = sum
            }
            if isNegative {
                guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
                return 0 &- Int64(bitPattern: magnitude)
            }
            return Int64(exactly: magnitude)
        }

        /// The correctly rounded Double of the literal (the stdlib's parser, as `strtod`).
        private func nearestDouble() throws(Unsupported) -> Double {
            guard let value = Double(String(decoding: text, as: UTF8.self)) else { throw Unsupported() }
            return value
        }

        /// Whether a digit before the exponent is not zero.
        private var hasNonzeroSignificand: Bool {
            for byte in text {
                if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return false }
                if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(byte) { return true }
            }
            return false
        }
    }
}
