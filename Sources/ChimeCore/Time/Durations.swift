/// Human durations such as `90s`, `1h30m` or `500ms`, as the CLI and configuration write them.
public enum DurationParser {
    /// Parses a duration into seconds.
    ///
    /// Shape: a plain non-negative number is seconds (`90`, `1.5`); otherwise one or more
    /// `<number><unit>` parts with units `w` (7 days), `d` (86,400 s), `h`, `m`, `s`, `ms`,
    /// each unit at most once and from largest to smallest (`1h30m`, `2d12h`, `1.5h`). Days
    /// and weeks are fixed lengths of seconds, not calendar days.
    /// - Returns: seconds, possibly fractional (`500ms` is `0.5`).
    /// - Throws: `ValidationError` `.invalidArgument` for empty text, a sign, an unknown or
    ///   repeated unit, units out of order, a number without a unit after another part, or a
    ///   value too large to represent.
    public static func parseSeconds(_ text: String) throws(ValidationError) -> Double {
        func failure(_ reason: String) -> ValidationError {
            ValidationError(.invalidArgument, "'\(text)' is not a duration such as 90s, 5m, 1h30m or 500ms: \(reason)")
        }
        guard !text.isEmpty else { throw failure("it is empty") }
        if let first = text.utf8.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            throw failure(first == UInt8(ascii: "-") ? "durations cannot be negative" : "remove the sign")
        }
        var scanner = ASCIIScanner(text)
        var total = 0.0
        var previousUnitRank = -1
        while !scanner.isAtEnd {
            let wholePart = scanner.consumeRun(while: \.isASCIIDigit)
            var numberText = String(decoding: wholePart, as: UTF8.self)
            if scanner.consume(UInt8(ascii: ".")) {
                let fractionPart = scanner.consumeRun(while: \.isASCIIDigit)
                guard !fractionPart.isEmpty else { throw failure("a decimal point needs digits after it") }
                numberText += "." + String(decoding: fractionPart, as: UTF8.self)
            }
            guard !wholePart.isEmpty || numberText.hasPrefix("."), let number = Double(numberText) else {
                throw failure("expected a number")
            }
            let unitText = String(decoding: scanner.consumeRun(while: \.isASCIILetter), as: UTF8.self)
            if unitText.isEmpty {
                guard scanner.isAtEnd && previousUnitRank < 0 else {
                    throw failure("\(numberText) has no unit")
                }
                return number
            }
            guard let unit = units.firstIndex(where: { $0.symbol == unitText }) else {
                throw failure("unknown unit '\(unitText)'; use w, d, h, m, s or ms")
            }
            guard unit > previousUnitRank else {
                throw failure("give each unit once, largest first (1h30m)")
            }
            previousUnitRank = unit
            total += number * units[unit].seconds
        }
        guard total.isFinite else { throw failure("it is too large") }
        return total
    }

    /// Formats seconds as the shortest `<number><unit>` sequence that ``parseSeconds(_:)``
    /// reads back: `5400` → `1h30m`, `90` → `1m30s`, `0.5` → `500ms`, `0` → `0s`.
    ///
    /// Rounds to whole milliseconds; negative values get a leading `-` (which the parser
    /// refuses); non-finite values format as `inf` or `nan`, and values beyond
    /// 292 million years as plain seconds.
    public static func format(seconds: Double) -> String {
        guard seconds.isFinite else { return seconds.isNaN ? "nan" : "inf" }
        let milliseconds = (abs(seconds) * 1000).rounded()
        // Beyond Int64 milliseconds (about 292 million years) plain seconds read back fine.
        guard milliseconds < 9e18 else { return "\(seconds)" }
        var remaining = Int64(milliseconds)
        guard remaining > 0 else { return "0s" }
        var text = seconds < 0 ? "-" : ""
        for unit in units {
            let unitMilliseconds = Int64(unit.seconds * 1000)
            let count = remaining / unitMilliseconds
            if count > 0 {
                text += "\(count)\(unit.symbol)"
                remaining -= count * unitMilliseconds
            }
        }
        return text
    }

    /// Units from largest to smallest; parts must go up in this index.
    private static let units: [(symbol: String, seconds: Double)] = [
        ("w", 604_800), ("d", 86_400), ("h", 3600), ("m", 60), ("s", 1), ("ms", 0.001),
    ]
}
