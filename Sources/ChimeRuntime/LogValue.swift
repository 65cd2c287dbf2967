/// One typed metadata value of a log line: JSON lines write numbers and booleans as JSON
/// numbers and booleans (`"pid":18066`), text lines write each value as `key=value`.
///
/// Literals build values directly (`["pid": 18066, "warm": true, "store": "\(path)"]`); a
/// variable goes in with its case (`.int(count)`) or interpolation (`"\(name)"`).
public enum LogValue: Sendable, Hashable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)

    /// A real rounded to `digits` decimal places (a duration in milliseconds to 0.1 ms:
    /// `.rounded(12.345, digits: 1)` is `12.3`), so lines stay short.
    public static func rounded(_ value: Double, digits: Int) -> LogValue {
        var scale = 1.0
        for _ in 0..<max(0, digits) { scale *= 10 }
        return .double((value * scale).rounded() / scale)
    }

    /// A whole number of any width (`UInt64`, `Int32`, …), clamped to `Int`'s range.
    public static func integer<Number: BinaryInteger>(_ value: Number) -> LogValue { .int(Int(clamping: value)) }

    /// The value as JSON text: a string quoted and escaped (RFC 8259 §7; `/` left as it is),
    /// a number as a JSON number (`null` for NaN and the infinities, which JSON lacks).
    public var jsonText: String {
        switch self {
        case .string(let text): return Self.jsonQuoted(text)
        case .int(let number): return String(number)
        case .double(let number):
            guard number.isFinite else { return "null" }
            // Swift's shortest round-trip form (`0.5`, `1e-05`, `1e+20`) is valid JSON.
            return "\(number)"
        case .bool(let flag): return flag ? "true" : "false"
        }
    }

    /// Quotes `text` as a JSON string: `"` and `\` escaped, control characters as `\n`, `\t`
    /// or `\u00XX`; everything else, `/` and non-ASCII included, as it is (UTF-8).
    public static func jsonQuoted(_ text: String) -> String {
        var quoted = "\""
        quoted.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}

extension LogValue: CustomStringConvertible {
    /// The value as a text line shows it after `key=`.
    public var description: String {
        switch self {
        case .string(let text): text
        case .int(let number): String(number)
        case .double(let number): "\(number)"
        case .bool(let flag): flag ? "true" : "false"
        }
    }
}

extension LogValue: ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension LogValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int) { self = .int(value) }
}

extension LogValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension LogValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
