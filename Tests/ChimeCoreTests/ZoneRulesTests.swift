import Foundation
import Testing

@testable import ChimeCore

@Suite struct ZoneRulesTests {
    @Test(arguments: [
        "Europe/Berlin", "UTC", "Etc/UTC", "GMT", "America/Argentina/Buenos_Aires", "Australia/Lord_Howe",
        "Pacific/Apia", "US/Eastern", "Etc/GMT-14", "EST5EDT", "Asia/Kathmandu",
    ])
    func acceptsIANAIdentifiers(identifier: String) throws {
        let zone = try ZoneRules.zone(named: identifier)
        #expect(
            zone.secondsFromGMT(for: Date(timeIntervalSince1970: 0))
                == TimeZone(identifier: identifier)?
                .secondsFromGMT(for: Date(timeIntervalSince1970: 0)))
    }

    @Test(arguments: [
        "CEST", "PST", "IST", "JST", "BST", "AET", "garbage", "", "europe/berlin", "GMT+1", "UTC+01:00",
        "GMT+0530", "SystemV/AST4", "Europe/Berlin\u{0}", " Europe/Berlin", "Europe/Berlin/", "Europe//Berlin",
        "/Europe/Berlin", "Factory", "Mars/Olympus_Mons", "Europe/Atlantis", "localtime", "posixrules",
    ])
    func rejectsAbbreviationsOffsetsAndGarbage(identifier: String) {
        let error = #expect(throws: ValidationError.self) { try ZoneRules.zone(named: identifier) }
        #expect(error?.code == .unknownTimeZone)
        #expect(error?.field == "trigger.timeZone")
    }

    @Test func suggestsTheCorrectlyCasedIdentifier() {
        let error = #expect(throws: ValidationError.self) { try ZoneRules.zone(named: "europe/berlin") }
        #expect(error?.message.contains("did you mean Europe/Berlin?") == true)
    }

    /// (zone, wall-clock time, expected instant): ordinary times, gaps shifted forward by the
    /// gap's length, and overlaps resolved to their first occurrence.
    static let resolutions: [(String, String, String)] = [
        ("Europe/Berlin", "2026-01-15T09:00", "2026-01-15T08:00:00Z"),
        ("Europe/Berlin", "2026-07-01T09:00", "2026-07-01T07:00:00Z"),
        ("Europe/Berlin", "2026-03-29T01:59:59", "2026-03-29T00:59:59Z"),
        ("Europe/Berlin", "2026-03-29T02:00", "2026-03-29T01:00:00Z"),
        ("Europe/Berlin", "2026-03-29T02:30", "2026-03-29T01:30:00Z"),
        ("Europe/Berlin", "2026-03-29T02:59:59", "2026-03-29T01:59:59Z"),
        ("Europe/Berlin", "2026-03-29T03:00", "2026-03-29T01:00:00Z"),
        ("Europe/Berlin", "2026-10-25T01:59", "2026-10-24T23:59:00Z"),
        ("Europe/Berlin", "2026-10-25T02:00", "2026-10-25T00:00:00Z"),
        ("Europe/Berlin", "2026-10-25T02:30", "2026-10-25T00:30:00Z"),
        ("Europe/Berlin", "2026-10-25T03:00", "2026-10-25T02:00:00Z"),
        ("America/New_York", "2026-03-08T02:30", "2026-03-08T07:30:00Z"),
        ("America/New_York", "2026-11-01T01:30", "2026-11-01T05:30:00Z"),
        ("Australia/Lord_Howe", "2026-10-04T02:15", "2026-10-03T15:45:00Z"),
        ("Australia/Lord_Howe", "2026-10-04T02:30", "2026-10-03T15:30:00Z"),
        ("Australia/Lord_Howe", "2026-04-05T01:45", "2026-04-04T14:45:00Z"),
        ("Australia/Lord_Howe", "2026-04-05T02:00", "2026-04-04T15:30:00Z"),
        ("Pacific/Apia", "2011-12-29T09:00", "2011-12-29T19:00:00Z"),
        ("Pacific/Apia", "2011-12-30T09:00", "2011-12-30T19:00:00Z"),
        ("Pacific/Apia", "2011-12-31T09:00", "2011-12-30T19:00:00Z"),
        ("Asia/Kathmandu", "2026-01-01T00:00", "2025-12-31T18:15:00Z"),
        ("UTC", "2026-03-29T02:30", "2026-03-29T02:30:00Z"),
    ]

    @Test(arguments: resolutions)
    func wallTimeInGapShiftsByGapLengthAndOverlapTakesFirstOccurrence(
        zone: String, wallClock: String, expected: String
    ) throws {
        let resolved = ZoneRules.resolve(try local(wallClock), in: try ZoneRules.zone(named: zone))
        #expect(RFC3339.format(resolved) == RFC3339.format(try utc(expected)))
    }

    /// Records what Foundation on Linux does, since `resolve` must not depend on it:
    /// `Calendar.date(from:)` agrees on every case above (gap read with the old offset,
    /// overlap at the first occurrence). A failure here means Foundation changed.
    @Test(arguments: resolutions)
    func foundationCalendarAgreesOnGapsAndOverlaps(zone: String, wallClock: String, expected: String) throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try ZoneRules.zone(named: zone)
        let fields = try local(wallClock)
        let date = calendar.date(
            from: DateComponents(
                year: fields.year, month: fields.month, day: fields.day,
                hour: fields.hour, minute: fields.minute, second: fields.second))
        #expect(date == (try utc(expected)))
    }

    @Test(arguments: [
        ("Europe/Berlin", "2026-10-25T00:30:00Z", "2026-10-25T02:30:00"),
        ("Europe/Berlin", "2026-10-25T01:30:00Z", "2026-10-25T02:30:00"),
        ("Australia/Lord_Howe", "2026-10-03T15:30:00Z", "2026-10-04T02:30:00"),
        ("Pacific/Apia", "2011-12-30T10:00:00Z", "2011-12-31T00:00:00"),
        ("UTC", "2026-12-24T08:00:00.999Z", "2026-12-24T08:00:00"),
    ])
    func showsTheWallClockTimeAtAnInstant(zone: String, instant: String, expected: String) throws {
        #expect(
            ZoneRules.localDateTime(at: try utc(instant), in: try ZoneRules.zone(named: zone)).description == expected)
    }

    @Test(arguments: ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Apia", "America/Santiago"])
    func resolvingTheWallClockOfAnInstantReturnsItOrItsFirstCopy(zone: String) throws {
        let timeZone = try ZoneRules.zone(named: zone)
        var generator = SeededGenerator(seed: 3355)
        for _ in 0..<1000 {
            let instant = Date(timeIntervalSince1970: Double(Int.random(in: 0..<2_147_483_647, using: &generator)))
            let wallClock = ZoneRules.localDateTime(at: instant, in: timeZone)
            let resolved = ZoneRules.resolve(wallClock, in: timeZone)
            #expect(ZoneRules.localDateTime(at: resolved, in: timeZone) == wallClock)
            #expect(resolved <= instant)
            #expect(instant.timeIntervalSince(resolved) <= 3600)
        }
    }
}
