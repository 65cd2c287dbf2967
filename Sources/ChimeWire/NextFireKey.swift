import ChimeCore
import Foundation

/// The order of `list --order next-fire` (``ListOrder/nextFire``).
public enum ListOrder: String, Codable, Hashable, Sendable, CaseIterable {
    /// By reminder key: id, then recipient (the default).
    case id
    /// By next firing, soonest first, then by key; reminders without one (not pending, or
    /// waiting for a place rather than a time) after all of those, in key order.
    case nextFire = "next-fire"

    /// The kind of this order's `list` cursors.
    public var cursorKind: PageCursor.Kind {
        switch self {
        case .id: .list
        case .nextFire: .listByNextFire
        }
    }
}

/// A reminder's place in next-fire order: its next fire instant in whole UTC milliseconds
/// since 1970 (`nil`: none, after every instant), then its key.
///
/// A `list` cursor of this order (`PageCursor.Kind.listByNextFire`) holds ``cursorBytes``:
/// one byte, 0 when an instant follows or 1 when none does; for 0 the milliseconds as 8
/// bytes big-endian with the sign bit flipped (so the bytes order as the numbers do); then
/// the key's storage form (UTF-8).
public struct NextFireKey: Comparable, Hashable, Sendable {
    /// The next fire instant in milliseconds since 1970 (UTC), or `nil` for none.
    public var fireMilliseconds: Int64?
    /// The reminder.
    public var key: ReminderKey

    /// The place of `key` firing next at `fireAt` (`nil`: no next firing), the instant
    /// rounded down to its millisecond as the wire writes it.
    public init(fireAt: Date?, key: ReminderKey) {
        self.fireMilliseconds = fireAt.map(RFC3339.unixMilliseconds(of:))
        self.key = key
    }

    /// The place from its parts.
    public init(fireMilliseconds: Int64?, key: ReminderKey) {
        self.fireMilliseconds = fireMilliseconds
        self.key = key
    }

    /// Soonest first; no next firing after every instant; ties by key.
    public static func < (lhs: NextFireKey, rhs: NextFireKey) -> Bool {
        switch (lhs.fireMilliseconds, rhs.fireMilliseconds) {
        case (let left?, let right?): left < right || (left == right && lhs.key < rhs.key)
        case (.some, nil): true
        case (nil, .some): false
        case (nil, nil): lhs.key < rhs.key
        }
    }

    /// The cursor form (see the type's documentation).
    public var cursorBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(9 + key.storage.utf8.count)
        if let fireMilliseconds {
            bytes.append(0)
            let biased = UInt64(bitPattern: fireMilliseconds) ^ (1 << 63)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: biased >> UInt64(shift))) }
        } else {
            bytes.append(1)
        }
        bytes.append(contentsOf: key.storage.utf8)
        return bytes
    }

    /// Reads the cursor form.
    /// - Returns: `nil` when `bytes` are not one (a bad first byte, too short, a key that
    ///   is not UTF-8 or not a key).
    public init?(cursorBytes bytes: [UInt8]) {
        guard let marker = bytes.first else { return nil }
        let keyStart: Int
        switch marker {
        case 0:
            guard bytes.count > 9 else { return nil }
            let biased = bytes[1...8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            fireMilliseconds = Int64(bitPattern: biased ^ (1 << 63))
            keyStart = 9
        case 1:
            fireMilliseconds = nil
            keyStart = 1
        default:
            return nil
        }
        guard let storage = String(validating: bytes[keyStart...], as: UTF8.self), let key = ReminderKey(storage: storage) else {
            return nil
        }
        self.key = key
    }
}
