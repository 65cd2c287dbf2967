import Foundation

/// What a firing does to its recipient's badge (`applicationIconBadgeNumber`).
///
/// JSON shape: a number (`3`, `0`, `-1`) for ``set(_:)``, or the string `"+1"` for
/// ``increment``. Plain numbers decode exactly as `Content.badge` always has.
public enum BadgeChange: Hashable, Sendable {
    /// The iOS rule: > 0 sets the badge to the number, 0 leaves it as it is, < 0 sets it to 0.
    case set(Int)
    /// Chime's relative mode (`--badge +1`): the badge rises by one on delivery and falls by
    /// one when the firing is handled, so it counts delivered, unhandled firings.
    case increment

    /// The JSON and command-line spelling of ``increment``.
    public static let incrementText = "+1"

    /// Parses the command-line form: `"+1"` or a whole number such as `3`, `0` or `-1`.
    /// - Throws: `ValidationError` `.invalidArgument` (field `content.badge`) for anything
    ///   else, including other signed forms such as `+2` (which could be read as "add two").
    public init(parsing text: String) throws(ValidationError) {
        if text == Self.incrementText {
            self = .increment
        } else if !text.hasPrefix("+"), let number = Int(text) {
            self = .set(number)
        } else {
            throw ValidationError(
                .invalidArgument, field: "content.badge",
                "'\(text)' is not a badge: give a whole number (>0 sets, 0 leaves, <0 clears) or +1")
        }
    }

    /// The badge after applying this change to `current` on delivery: `set(n)` gives `n` when
    /// `n` > 0, `current` when `n` == 0 and 0 when `n` < 0; `increment` gives `current + 1`.
    public func applied(to current: Int) -> Int {
        switch self {
        case .set(let number) where number > 0: return number
        case .set(let number) where number < 0: return 0
        case .set: return current
        case .increment: return current == .max ? current : current + 1
        }
    }
}

extension BadgeChange: ExpressibleByIntegerLiteral {
    /// A literal number is ``set(_:)``.
    public init(integerLiteral value: Int) {
        self = .set(value)
    }
}

extension BadgeChange: Codable {
    /// Decodes a JSON number as ``set(_:)`` or the string `"+1"` as ``increment``.
    /// - Throws: `DecodingError.dataCorrupted` for other strings or non-integral numbers.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self) {
            self = .set(number)
            return
        }
        guard let text = try? container.decode(String.self), text == Self.incrementText else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "badge must be a whole number (>0 sets, 0 leaves, <0 clears) or the string \"+1\"")
        }
        self = .increment
    }

    /// Encodes ``set(_:)`` as a JSON number and ``increment`` as `"+1"`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .set(let number): try container.encode(number)
        case .increment: try container.encode(Self.incrementText)
        }
    }
}
