import Foundation

/// What a new occurrence of a reminder does when the previous one is still unhandled on the
/// recipient's delivered list.
///
/// JSON: `"stack"` (the default, omitted when encoding), `"replace"`, `"skip"`.
public enum UnhandledPolicy: String, Codable, Hashable, Sendable, CaseIterable {
    /// Both stay listed, each counting toward a `"+1"` badge (Chime before issue 40, and iOS).
    case stack
    /// The new one takes the old one's place on the delivered list: the old leaves unhandled,
    /// so a `"+1"` badge counts the reminder once.
    case replace
    /// The new occurrence is not delivered (recorded as suppressed, with the reason
    /// ``skipReason``) while an earlier one is listed.
    case skip

    /// The suppression reason of an occurrence skipped under `.skip`.
    public static let skipReason = "previous occurrence unhandled (unhandled: skip)"

    /// The one-byte tag of the binary form: 1 replace, 2 skip (stack, the default, is never written).
    public var binaryTag: UInt8 {
        switch self {
        case .stack: 0
        case .replace: 1
        case .skip: 2
        }
    }

    /// The policy of a binary tag, or `nil` for a tag no policy has.
    public init?(binaryTag: UInt8) {
        switch binaryTag {
        case 0: self = .stack
        case 1: self = .replace
        case 2: self = .skip
        default: return nil
        }
    }
}
