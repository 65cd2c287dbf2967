import ChimeCore
import ChimeWire
import Foundation

/// One reminder with its place in the schedule, kept small: the reminder itself is held in its
/// binary form (`Reminder.binaryEncoded()`, about 150 bytes for a one-shot with a 100-byte body
/// instead of ~1 KB of structs and strings) and decoded when a firing, listing or change needs
/// it. The recurrence of a repeating reminder is cached in `Schedule.recurrences`; a one-shot's
/// is rebuilt on demand.
///
/// Equal when the bytes, the next occurrence, the state and the counters are (the other fields
/// are decoded from the bytes).
struct ReminderEntry: Sendable, Equatable {
    /// `Reminder.binaryEncoded()` of the reminder.
    private(set) var bytes: [UInt8]
    /// The reminder's recipient, decoded once: arming, caps and acknowledgements ask.
    private(set) var recipient: RecipientID
    // Declared before the one-byte fields, which then share its padding: with
    // `lastFiredSeconds`, 64 bytes a value instead of 80.
    var next: Occurrence?
    /// Whether its trigger repeats (`Trigger.isRepeating`), decoded once.
    private(set) var isRepeating: Bool
    /// Whether it has a nag policy, decoded once (every acknowledgement asks).
    private(set) var hasNag: Bool
    /// Whether its trigger has a remind-before offset or a spread (rare: only then do its
    /// fire instants differ from its events, and need the reminder decoded).
    private(set) var hasOffset: Bool
    var state: ReminderState
    var deliveredCount = 0
    /// `lastFiredAt` in seconds since the reference date, NaN for none: 8 bytes where a
    /// `Date?` takes 9, which rounded the value up to 72 bytes instead of 64 (17 MB of the
    /// entry table's buckets at a million reminders: its hash tables keep about two buckets
    /// a reminder).
    private var lastFiredSeconds = Double.nan

    /// When it last fired (UTC), or `nil` when it never has.
    var lastFiredAt: Date? {
        get { lastFiredSeconds.isNaN ? nil : Date(timeIntervalSinceReferenceDate: lastFiredSeconds) }
        set { lastFiredSeconds = newValue?.timeIntervalSinceReferenceDate ?? .nan }
    }

    init(reminder: Reminder, next: Occurrence?, state: ReminderState, deliveredCount: Int = 0, lastFiredAt: Date? = nil) {
        bytes = reminder.binaryEncoded()
        recipient = reminder.recipient
        isRepeating = reminder.trigger.isRepeating
        hasNag = reminder.nag != nil
        hasOffset = reminder.trigger.offset != nil || reminder.trigger.spread != nil
        self.next = next
        self.state = state
        self.deliveredCount = deliveredCount
        self.lastFiredAt = lastFiredAt
    }

    /// Decodes an entry's bytes: the coordinator's own encoding, or a snapshot's that passed
    /// the file's CRC-32C and `binarySummary`, so a failure is a bug in this code (the one
    /// place that says so, for entries and for listing pages decoded off the loop).
    static func decodeStored(_ bytes: ArraySlice<UInt8>) -> Reminder {
        do {
            return try Reminder(binary: bytes)
        } catch {
            preconditionFailure("a reminder the coordinator encoded does not decode: \(error)")
        }
    }

    /// Takes bytes a snapshot holds as they are (checked: they must decode).
    /// - Throws: `BinaryDecodingError` when they do not.
    init(bytes: [UInt8], next: Occurrence?, state: ReminderState, deliveredCount: Int, lastFiredAt: Date?)
        throws(BinaryDecodingError)
    {
        let summary = try Reminder.binarySummary(in: bytes[...])
        recipient = summary.recipient
        isRepeating = summary.isRepeating
        hasNag = summary.hasNag
        hasOffset = summary.hasOffset || summary.hasSpread
        self.bytes = bytes
        self.next = next
        self.state = state
        self.deliveredCount = deliveredCount
        self.lastFiredAt = lastFiredAt
    }

    /// The bytes the reminder is kept in (its binary form), for tenant quotas.
    var storedBytes: Int { bytes.count }

    /// The reminder, decoded from `bytes`; setting it re-encodes.
    var reminder: Reminder {
        get { Self.decodeStored(bytes[...]) }
        set {
            bytes = newValue.binaryEncoded()
            recipient = newValue.recipient
            isRepeating = newValue.trigger.isRepeating
            hasNag = newValue.nag != nil
            hasOffset = newValue.trigger.offset != nil || newValue.trigger.spread != nil
        }
    }

    /// When `occurrence` fires: its instant less the trigger's remind-before offset, plus its
    /// spread delay (`Trigger.fireInstant(eventInstant:of:)`; the reminder is decoded only
    /// when it has either).
    func fireInstant(of occurrence: Occurrence) -> Date {
        guard hasOffset else { return occurrence.instant }
        let reminder = reminder
        return reminder.trigger.fireInstant(eventInstant: occurrence.instant, of: reminder.key)
    }

    static func == (lhs: ReminderEntry, rhs: ReminderEntry) -> Bool {
        lhs.bytes == rhs.bytes && lhs.next == rhs.next && lhs.state == rhs.state
            && lhs.deliveredCount == rhs.deliveredCount && lhs.lastFiredAt == rhs.lastFiredAt
    }
}

/// A firing as the unsettled map and the in-flight map share it: a reference, so those hash
/// tables move 8 bytes instead of a whole `Firing` (~250 bytes) when they insert or delete.
/// Immutable: a changed firing is a new box, so states stay values. Equal when the firings are.
final class SharedFiring: Sendable, Equatable {
    let firing: Firing
    init(_ firing: Firing) { self.firing = firing }

    static func == (lhs: SharedFiring, rhs: SharedFiring) -> Bool { lhs === rhs || lhs.firing == rhs.firing }
}

extension ReminderEntry {
    /// Its place in next-fire order as the reminder of `key`: its next occurrence's fire
    /// instant while pending, else none (after every instant).
    func nextFirePlace(of key: ReminderKey) -> NextFireKey {
        NextFireKey(fireAt: state == .pending ? next.map { fireInstant(of: $0) } : nil, key: key)
    }

    /// Whether its trigger names calendars, follows the sun or a region (read from the bytes'
    /// flags: only rebuilding the trigger indexes asks).
    var usesTriggerState: Bool { (try? Reminder.binarySummary(in: bytes[...]))?.isBeyondTheClock ?? false }
}
