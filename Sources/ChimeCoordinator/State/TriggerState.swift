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

    /// A range of fire instants a backfill covered (UTC, inclusive).
    struct CoveredRange: Codable, Hashable, Sendable {
        var from: Date
        var through: Date
    }

    var isEmpty: Bool { remaining.isEmpty && notes.isEmpty && backfilled.isEmpty }

    /// Forgets everything about a reminder (cancelled, or replaced by a new one of its key).
    mutating func forget(_ key: ReminderKey) {
        guard !isEmpty else { return }
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
        return (slice, rest)
    }

    /// Takes in another state's part (of recipients this one holds none of).
    mutating func merge(_ other: TriggerState) {
        remaining.merge(other.remaining) { mine, _ in mine }
        notes.merge(other.notes) { mine, _ in mine }
        backfilled.merge(other.backfilled) { mine, _ in mine }
    }

    /// The snapshot form: entries in key order, so equal states write equal bytes.
    struct Record: Codable, Equatable {
        var remaining: [KeyedValue<Int>]?
        var notes: [KeyedValue<String>]?
        var backfilled: [KeyedValue<[CoveredRange]>]?
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
        return Record(remaining: sorted(remaining), notes: sorted(notes), backfilled: sorted(backfilled))
    }

    init() {}

    init(_ record: Record) {
        for item in record.remaining ?? [] { remaining[item.reminder] = item.value }
        for item in record.notes ?? [] { notes[item.reminder] = item.value }
        for item in record.backfilled ?? [] { backfilled[item.reminder] = item.value }
    }
}
