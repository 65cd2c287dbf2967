import ChimeCore
import Foundation

/// The durable state of the triggers beyond the clock (issue 41): a part of `DurableState`,
/// changed only by its fold, serialised into the snapshot header (``Record``) and cut by
/// recipient with the rest of a slice.
///
/// - `remaining`: per reminder, how many occurrences it has left (set by `remaining`; each
///   occurrence the schedule moves past counts one).
/// - `notes`: per reminder, why an operator switched it off (`disable --note`).
/// - `backfilled`: per reminder, the fire-instant ranges (UTC, inclusive) that backfills
///   covered, merged and sorted: a second backfill of a range fires nothing.
///
/// Every part is keyed by a reminder, so it moves with its recipient; a reminder cancelled or
/// replaced forgets its part.
struct TriggerState: Sendable, Equatable {
    var remaining: [ReminderKey: Int] = [:]
    var notes: [ReminderKey: String] = [:]
    var backfilled: [ReminderKey: [CoveredRange]] = [:]
    /// The shard's copy of the cluster's exclusion calendars, by name (set on every shard by
    /// the cluster client; a slice carries a copy of them all).
    var calendars: [String: ExclusionCalendar] = [:]
    /// Each recipient's last accepted location report: all the history detection needs.
    var locations: [RecipientID: LocationReport] = [:]
    /// The region reminders each recipient is inside (of a recipient with a location, every
    /// other region reminder is outside; without one, all are undetermined).
    var inside: [RecipientID: Set<ReminderKey>] = [:]

    // Derived from the schedule (rebuilt, never stored, left out of `==`).
    /// Every region reminder, filed by its recipient.
    var regions = RegionIndex<RecipientID, ReminderKey>()
    /// The region reminders of each recipient.
    var regionsOf: [RecipientID: Set<ReminderKey>] = [:]
    /// The reminders that name each calendar.
    var calendarUsers: [String: Set<ReminderKey>] = [:]
    /// The sun reminders that follow each recipient's place.
    var placeFollowers: [RecipientID: Set<ReminderKey>] = [:]

    static func == (lhs: TriggerState, rhs: TriggerState) -> Bool {
        lhs.remaining == rhs.remaining && lhs.notes == rhs.notes && lhs.backfilled == rhs.backfilled
            && lhs.calendars == rhs.calendars && lhs.locations == rhs.locations && lhs.inside == rhs.inside
    }

    /// Files a reminder in the derived indexes (after it is placed).
    mutating func track(_ key: ReminderKey, _ trigger: Trigger) {
        if let region = trigger.region {
            regions.insert(key, in: key.recipient, center: region.center, radius: region.radius)
            regionsOf[key.recipient, default: []].insert(key)
        }
        for name in trigger.calendars { calendarUsers[name, default: []].insert(key) }
        if trigger.followsRecipientPlace { placeFollowers[key.recipient, default: []].insert(key) }
    }

    /// Takes a reminder out of the derived indexes and forgets its region presence.
    mutating func untrack(_ key: ReminderKey) {
        if regionsOf[key.recipient]?.remove(key) != nil {
            regions.remove(key)
            if regionsOf[key.recipient]?.isEmpty ?? false { regionsOf[key.recipient] = nil }
            if inside[key.recipient]?.remove(key) != nil, inside[key.recipient]?.isEmpty ?? false { inside[key.recipient] = nil }
        }
        if !calendarUsers.isEmpty {
            for name in calendarUsers.keys where calendarUsers[name]?.remove(key) != nil {
                if calendarUsers[name]?.isEmpty ?? false { calendarUsers[name] = nil }
            }
        }
        if placeFollowers[key.recipient]?.remove(key) != nil, placeFollowers[key.recipient]?.isEmpty ?? false {
            placeFollowers[key.recipient] = nil
        }
    }

    /// A range of fire instants a backfill covered (UTC, inclusive).
    struct CoveredRange: Codable, Hashable, Sendable {
        var from: Date
        var through: Date
    }

    var isEmpty: Bool {
        remaining.isEmpty && notes.isEmpty && backfilled.isEmpty && calendars.isEmpty && locations.isEmpty && inside.isEmpty
    }

    /// Whether no reminder is in a derived index.
    var tracksNothing: Bool { regionsOf.isEmpty && calendarUsers.isEmpty && placeFollowers.isEmpty }

    /// Forgets everything about a reminder (cancelled, or replaced by a new one of its key).
    mutating func forget(_ key: ReminderKey) {
        if !tracksNothing { untrack(key) }
        guard !remaining.isEmpty || !notes.isEmpty || !backfilled.isEmpty else { return }
        remaining[key] = nil
        notes[key] = nil
        backfilled[key] = nil
    }

    /// Whether a backfill covered `instant` already.
    func isCovered(_ instant: Date, of key: ReminderKey) -> Bool {
        backfilled[key]?.contains { $0.from <= instant && instant <= $0.through } ?? false
    }

    /// Records `from...through` as covered, merged with the ranges it touches.
    mutating func cover(from: Date, through: Date, of key: ReminderKey) {
        var ranges = backfilled[key] ?? []
        ranges.append(CoveredRange(from: from, through: through))
        ranges.sort { $0.from < $1.from }
        var merged: [CoveredRange] = []
        for range in ranges {
            if let last = merged.last, range.from <= last.through {
                merged[merged.count - 1].through = max(last.through, range.through)
            } else {
                merged.append(range)
            }
        }
        backfilled[key] = merged
    }

    /// The part about the recipients `isSliced` accepts, and the rest.
    func split(_ isSliced: (RecipientID) -> Bool) -> (slice: TriggerState, rest: TriggerState) {
        var slice = TriggerState()
        var rest = TriggerState()
        for (key, count) in remaining {
            if isSliced(key.recipient) { slice.remaining[key] = count } else { rest.remaining[key] = count }
        }
        for (key, note) in notes {
            if isSliced(key.recipient) { slice.notes[key] = note } else { rest.notes[key] = note }
        }
        for (key, ranges) in backfilled {
            if isSliced(key.recipient) { slice.backfilled[key] = ranges } else { rest.backfilled[key] = ranges }
        }
        for (recipient, report) in locations {
            if isSliced(recipient) { slice.locations[recipient] = report } else { rest.locations[recipient] = report }
        }
        for (recipient, keys) in inside {
            if isSliced(recipient) { slice.inside[recipient] = keys } else { rest.inside[recipient] = keys }
        }
        // Calendars are the cluster's: each part keeps a copy (a target lacking one adopts it).
        slice.calendars = calendars
        rest.calendars = calendars
        return (slice, rest)
    }

    /// Takes in another state's part (of recipients this one holds none of).
    mutating func merge(_ other: TriggerState) {
        remaining.merge(other.remaining) { mine, _ in mine }
        notes.merge(other.notes) { mine, _ in mine }
        backfilled.merge(other.backfilled) { mine, _ in mine }
        locations.merge(other.locations) { mine, _ in mine }
        inside.merge(other.inside) { mine, _ in mine }
        calendars.merge(other.calendars) { mine, _ in mine }
    }

    /// The snapshot form: entries in key order, so equal states write equal bytes.
    struct Record: Codable, Equatable {
        var remaining: [KeyedValue<Int>]?
        var notes: [KeyedValue<String>]?
        var backfilled: [KeyedValue<[CoveredRange]>]?
        var calendars: [NamedCalendar]?
        var locations: [RecipientLocation]?
    }

    /// A calendar and its name.
    struct NamedCalendar: Codable, Equatable {
        var name: String
        var calendar: ExclusionCalendar
    }

    /// A recipient's last report and the region reminders it is inside.
    struct RecipientLocation: Codable, Equatable {
        var recipient: RecipientID
        var report: LocationReport?
        var inside: [ReminderKey]?
    }

    /// A reminder key (its text, `<recipient>/<id>` escaped as firing ids are) and a value.
    struct KeyedValue<Value: Codable & Equatable>: Codable, Equatable {
        var reminder: ReminderKey
        var value: Value
    }

    var record: Record {
        func sorted<Value>(_ values: [ReminderKey: Value]) -> [KeyedValue<Value>]? {
            values.isEmpty ? nil : values.sorted { $0.key < $1.key }.map { KeyedValue(reminder: $0.key, value: $0.value) }
        }
        let named = calendars.sorted { $0.key < $1.key }.map { NamedCalendar(name: $0.key, calendar: $0.value) }
        let recipients = Set(locations.keys).union(inside.keys).sorted()
        let located = recipients.map { recipient in
            RecipientLocation(recipient: recipient, report: locations[recipient], inside: inside[recipient].map { $0.sorted() })
        }
        return Record(
            remaining: sorted(remaining), notes: sorted(notes), backfilled: sorted(backfilled),
            calendars: named.isEmpty ? nil : named, locations: located.isEmpty ? nil : located)
    }

    init() {}

    init(_ record: Record) {
        for item in record.remaining ?? [] { remaining[item.reminder] = item.value }
        for item in record.notes ?? [] { notes[item.reminder] = item.value }
        for item in record.backfilled ?? [] { backfilled[item.reminder] = item.value }
        for item in record.calendars ?? [] { calendars[item.name] = item.calendar }
        for item in record.locations ?? [] {
            if let report = item.report { locations[item.recipient] = report }
            if let keys = item.inside, !keys.isEmpty { inside[item.recipient] = Set(keys) }
        }
    }
}
