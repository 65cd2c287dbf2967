import Foundation

/// What an occurrence does when its recipient's throttle (``DeliveryThrottle``) has no room
/// for it: the reminder's choice, as Knock's and Novu's throttle steps and Braze's rate
/// limits offer it.
///
/// JSON (`content.throttled`): `"hold"` (the default, omitted when encoding), `"coalesce"`,
/// `"drop"`. Nothing is lost silently: a coalesced or dropped occurrence is journaled as
/// suppressed with its reason and counted in `chime_occurrences_suppressed_total`.
public enum ThrottledPolicy: String, Codable, Hashable, Sendable, CaseIterable {
    /// Held until the slot the throttle gives it, in order (every occurrence is delivered).
    case hold
    /// Held like `hold` unless a firing of the same reminder already waits for the throttle:
    /// then this occurrence is suppressed and the waiting firing stands for it, so a reminder
    /// that fires faster than the throttle allows builds no backlog.
    case coalesce
    /// Suppressed at once.
    case drop

    /// The suppression reason of an occurrence dropped under `.drop`.
    public static let dropReason = "over the recipient's throttle (throttled: drop)"

    /// The suppression reason of an occurrence coalesced into the held firing `held`.
    public static func coalescedReason(into held: FiringID) -> String {
        "coalesced into held firing \(held.text) (throttled: coalesce)"
    }

    /// The one-byte tag of the binary form: 1 coalesce, 2 drop (hold, the default, is never written).
    public var binaryTag: UInt8 {
        switch self {
        case .hold: 0
        case .coalesce: 1
        case .drop: 2
        }
    }

    /// The policy of a binary tag, or `nil` for a tag no policy has.
    public init?(binaryTag: UInt8) {
        switch binaryTag {
        case 0: self = .hold
        case 1: self = .coalesce
        case 2: self = .drop
        default: return nil
        }
    }
}
