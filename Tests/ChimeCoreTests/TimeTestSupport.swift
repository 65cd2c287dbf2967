import Foundation
import Testing

@testable import ChimeCore

/// Parses a fixed RFC 3339 test instant, failing the test on a typo.
func utc(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Date {
    do {
        return try RFC3339.parseInstant(text)
    } catch {
        Issue.record("bad test instant \(text): \(error)", sourceLocation: sourceLocation)
        throw error
    }
}

/// Parses a fixed wall-clock test time.
func local(_ text: String) throws -> LocalDateTime {
    try LocalDateTime(parsing: text)
}

/// The first `count` occurrences, walked with `firstOccurrence` then `nextOccurrence`.
func firstOccurrences(of recurrence: Recurrence, count: Int) -> [Occurrence] {
    var result: [Occurrence] = []
    var current = recurrence.firstOccurrence(onOrAfter: .distantPast)
    while let occurrence = current, result.count < count {
        result.append(occurrence)
        current = recurrence.nextOccurrence(after: occurrence)
    }
    return result
}

/// A recurrence from a wall-clock start in `zone`, repeating every `interval` `unit`s.
func makeWallClockRecurrence(_ time: String, _ zone: String, every unit: RepeatUnit?, interval: Int = 1) throws
    -> Recurrence
{
    try Recurrence(
        start: .wallClock(try local(time), zoneIdentifier: zone),
        rule: unit.map { RepeatRule(unit: $0, interval: interval) })
}

/// A recurrence from an instant start, repeating on UTC fields or elapsed time.
func makeInstantRecurrence(_ time: String, every unit: RepeatUnit?, interval: Int = 1) throws -> Recurrence {
    try Recurrence(start: .instant(try utc(time)), rule: unit.map { RepeatRule(unit: $0, interval: interval) })
}

/// The first `count` occurrence instants as RFC 3339 UTC text.
func formattedOccurrences(of recurrence: Recurrence, count: Int) -> [String] {
    firstOccurrences(of: recurrence, count: count).map { RFC3339.format($0.instant) }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded generator so randomized tests repeat.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

/// A recurrence of RFC 5545 rule text from a wall-clock start in `zone`.
func makeRuleRecurrence(
    _ rrule: String, from start: String, in zone: String, rdates: [String] = [], exdates: [String] = [],
    monthEnd: MonthEndPolicy = .skip
) throws -> Recurrence {
    try Recurrence(
        start: .wallClock(try local(start), zoneIdentifier: zone),
        recurrenceRule: try RecurrenceRule(parsing: rrule),
        recurrenceDates: try rdates.map(RecurrenceDateTime.init(parsing:)),
        exceptionDates: try exdates.map(RecurrenceDateTime.init(parsing:)), monthEnd: monthEnd)
}

/// The first `count` occurrences (walked with `nextOccurrence`) as `YYYY-MM-DDTHH:MM:SSZ`.
func utcTexts(of recurrence: Recurrence, count: Int) -> [String] {
    firstOccurrences(of: recurrence, count: count).map { String(RFC3339.format($0.instant).prefix(19)) + "Z" }
}

/// The first `count` occurrences as wall-clock text in `zone`.
func wallTexts(of recurrence: Recurrence, count: Int, in zone: String) throws -> [String] {
    let timeZone = try ZoneRules.zone(named: zone)
    return firstOccurrences(of: recurrence, count: count).map {
        ZoneRules.localDateTime(at: $0.instant, in: timeZone).description
    }
}
