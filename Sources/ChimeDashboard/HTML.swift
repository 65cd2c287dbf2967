import Foundation

/// A fragment of HTML whose every interpolated `String` is escaped: literals in the source
/// are markup, values are text. `"<td>\(reminder.title)</td>" as HTML` shows a title of
/// `<script>` as the characters `<script>`, never as an element. Interpolating an `HTML`
/// value inserts it as markup (it was escaped when it was made).
public struct HTML: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The markup.
    public private(set) var text: String

    /// Markup from the source code (trusted as it is).
    public init(stringLiteral value: String) { text = value }

    /// Markup built by interpolation: strings escaped, `HTML` kept.
    public init(stringInterpolation: Interpolation) { text = stringInterpolation.text }

    /// Markup already escaped (for the few helpers that build it from parts).
    init(trusted text: String) { self.text = text }

    /// The empty fragment.
    public static let empty: HTML = ""

    public var description: String { text }

    /// Joins fragments in order.
    public static func join(_ parts: [HTML]) -> HTML { HTML(trusted: parts.map(\.text).joined()) }

    /// Escapes `value` for element content and quoted attribute values: `&`, `<`, `>`, `"`
    /// and `'` become character references (OWASP XSS prevention, rule 1 and 2).
    public static func escape(_ value: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count)
        for character in value.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// Percent-encodes `value` for a URL query (RFC 3986 unreserved characters kept): the
    /// result contains no character HTML treats specially.
    public static func queryEncode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// Builds the text of an `HTML` value.
    public struct Interpolation: StringInterpolationProtocol {
        var text = ""

        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount * 16)
        }

        public mutating func appendLiteral(_ literal: String) { text += literal }

        /// Text, escaped.
        public mutating func appendInterpolation(_ value: String) { text += HTML.escape(value) }

        /// Text or nothing, escaped; `placeholder` for `nil`.
        public mutating func appendInterpolation(_ value: String?, or placeholder: String) {
            text += HTML.escape(value ?? placeholder)
        }

        /// Markup, as it is.
        public mutating func appendInterpolation(_ value: HTML) { text += value.text }

        /// Fragments, in order.
        public mutating func appendInterpolation(_ values: [HTML]) { for value in values { text += value.text } }

        /// An integer in decimal.
        public mutating func appendInterpolation<Number: BinaryInteger>(_ value: Number) { text += String(value) }

        /// A number with `digits` decimals (`-` when it is not finite).
        public mutating func appendInterpolation(_ value: Double, digits: Int) {
            text += value.isFinite ? String(format: "%.\(max(0, min(digits, 9)))f", value) : "-"
        }

        /// A query value, percent-encoded.
        public mutating func appendInterpolation(query value: String) { text += HTML.queryEncode(value) }
    }
}
