import Foundation

/// How urgently a firing asks for the recipient's attention: `UNNotificationInterruptionLevel`.
///
/// JSON: `"passive"`, `"active"` (the default, omitted when encoding), `"timeSensitive"`,
/// `"critical"`. Ordered from least to most urgent (`passive < active < timeSensitive <
/// critical`). A recipient that has not granted `timeSensitive` or `critical` gets such a
/// firing as `active` (see ``DeliveryPlan``); both break through quiet hours.
public enum InterruptionLevel: String, Codable, Hashable, Sendable, CaseIterable, Comparable {
    /// Delivered to the delivered list without lighting the screen or playing a sound.
    case passive
    /// Presented, with sound if the content has one: Apple's default.
    case active
    /// Presented immediately, breaking through quiet hours (needs the recipient's grant).
    case timeSensitive
    /// Presented with sound even when muted, breaking through quiet hours (needs the
    /// recipient's grant; Apple requires an entitlement).
    case critical

    /// The one-byte tag of the binary form: 0 passive, 1 active, 2 timeSensitive, 3 critical.
    public var binaryTag: UInt8 {
        switch self {
        case .passive: 0
        case .active: 1
        case .timeSensitive: 2
        case .critical: 3
        }
    }

    /// The level of a binary tag, or `nil` for a tag no level has.
    public init?(binaryTag: UInt8) {
        switch binaryTag {
        case 0: self = .passive
        case 1: self = .active
        case 2: self = .timeSensitive
        case 3: self = .critical
        default: return nil
        }
    }

    /// Whether the level may interrupt during quiet hours (`timeSensitive` and `critical`).
    public var breaksThroughQuietHours: Bool { self >= .timeSensitive }

    /// Orders by urgency, as the binary tags do.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.binaryTag < rhs.binaryTag }
}
