import Foundation
import Testing

@testable import ChimeCore

/// Quiet windows on the recipient's wall clock: edges, midnight, weekdays, chains, and the
/// nights the clocks change (Europe/Berlin: 2026-03-29 02:00 → 03:00, 2026-10-25 03:00 → 02:00).
@Suite struct QuietWindowTests {
    let berlin = TimeZone(identifier: "Europe/Berlin")!
    let night = QuietWindow(start: 22 * 60, end: 7 * 60)

    func instant(_ text: String) throws -> Date { try RFC3339.parseInstant(text) }

    func release(_ text: String, _ windows: [QuietWindow]? = nil, zone: TimeZone? = nil) throws -> String? {
        QuietWindow.release(of: try instant(text), windows: windows ?? [night], in: zone ?? berlin).map(RFC3339.format)
    }

    @Test(arguments: [
        // 21:59:59 CET: before the window.
        ("2026-12-24T20:59:59Z", nil as String?),
        // 22:00 CET: the start is inside.
        ("2026-12-24T21:00:00Z", "2026-12-25T06:00:00.000Z"),
        ("2026-12-24T23:59:59Z", "2026-12-25T06:00:00.000Z"),
        // After midnight the window that started yesterday holds it.
        ("2026-12-25T05:59:59.999Z", "2026-12-25T06:00:00.000Z"),
        // 07:00 CET: the end is outside.
        ("2026-12-25T06:00:00Z", nil),
        ("2026-12-25T12:00:00Z", nil),
    ])
    func edgesOfANightWindow(at text: String, released: String?) throws {
        #expect(try release(text) == released)
    }

    @Test func aNightWhenTheClocksSpringForwardIsEightHoursLong() throws {
        // 22:00 CET on 03-28 is 21:00Z; 07:00 CEST on 03-29 is 05:00Z.
        #expect(try release("2026-03-28T21:00:00Z") == "2026-03-29T05:00:00.000Z")
        #expect(try release("2026-03-29T04:59:00Z") == "2026-03-29T05:00:00.000Z")
        #expect(try release("2026-03-29T05:00:00Z") == nil)
    }

    @Test func aNightWhenTheClocksFallBackIsTenHoursLong() throws {
        // 22:00 CEST on 10-24 is 20:00Z; 07:00 CET on 10-25 is 06:00Z.
        #expect(try release("2026-10-24T19:59:59Z") == nil)
        #expect(try release("2026-10-24T20:00:00Z") == "2026-10-25T06:00:00.000Z")
        // Both 02:30s of the repeated hour are inside.
        #expect(try release("2026-10-25T00:30:00Z") == "2026-10-25T06:00:00.000Z")
        #expect(try release("2026-10-25T01:30:00Z") == "2026-10-25T06:00:00.000Z")
    }

    @Test func aWindowStartingInTheSpringGapStartsAfterIt() throws {
        // 02:30-04:00 on 2026-03-29: 02:30 does not exist and becomes 03:30 CEST (01:30Z).
        let window = QuietWindow(start: 150, end: 240)
        #expect(try release("2026-03-29T01:29:59Z", [window]) == nil)
        #expect(try release("2026-03-29T01:30:00Z", [window]) == "2026-03-29T02:00:00.000Z")
    }

    @Test func weekdaysNameTheDayAWindowStarts() throws {
        // Friday nights only: 2026-12-25 is a Friday.
        let friday = QuietWindow(start: 22 * 60, end: 7 * 60, weekdays: [.friday])
        #expect(try release("2026-12-24T22:00:00Z", [friday]) == nil, "Thursday night")
        #expect(try release("2026-12-25T22:00:00Z", [friday]) == "2026-12-26T06:00:00.000Z", "Friday night")
        #expect(try release("2026-12-26T05:00:00Z", [friday]) == "2026-12-26T06:00:00.000Z", "early Saturday")
    }

    @Test func adjoiningWindowsReleaseAtTheLastEnd() throws {
        let evening = QuietWindow(start: 20 * 60, end: 0)
        let early = QuietWindow(start: 0, end: 6 * 60)
        #expect(try release("2026-12-24T20:00:00Z", [evening, early]) == "2026-12-25T05:00:00.000Z")
    }

    @Test func theZoneDecides() throws {
        let tokyo = TimeZone(identifier: "Asia/Tokyo")!
        // 22:30Z is 07:30 JST: outside; 14:00Z is 23:00 JST: inside until 22:00Z.
        #expect(try release("2026-12-24T22:30:00Z", zone: tokyo) == nil)
        #expect(try release("2026-12-24T14:00:00Z", zone: tokyo) == "2026-12-24T22:00:00.000Z")
    }

    @Test func parsesTheCommandLineForm() throws {
        #expect(try QuietWindow(parsing: "22:00-07:00") == night)
        #expect(try QuietWindow(parsing: "mo,TU 13:30-14:00") == QuietWindow(start: 810, end: 840, weekdays: [.monday, .tuesday]))
        for bad in ["22:00", "22-07", "24:00-07:00", "22:00-22:00", "XX 22:00-07:00", "22:00 - 07:00", "2200-0700"] {
            #expect(throws: ValidationError.self, "\(bad)") { try QuietWindow(parsing: bad) }
        }
    }

    @Test func encodesAndDecodesTheJSONShape() throws {
        let window = QuietWindow(start: 22 * 60, end: 7 * 60 + 5, weekdays: [.sunday, .monday])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(window), as: UTF8.self)
        #expect(json == #"{"end":"07:05","start":"22:00","weekdays":["MO","SU"]}"#)
        #expect(try JSONDecoder().decode(QuietWindow.self, from: Data(json.utf8)) == window)
        for bad in [#"{"start":"22:00"}"#, #"{"start":"7:00","end":"08:00"}"#, #"{"start":"22:00","end":"07:00","weekdays":["XX"]}"#,
                    #"{"start":"22:00","end":"07:00","days":[]}"#] {
            #expect(throws: DecodingError.self, "\(bad)") { try JSONDecoder().decode(QuietWindow.self, from: Data(bad.utf8)) }
        }
    }

    @Test func aRecipientHoldsOnlyPassiveAndActiveLevels() {
        let recipient = Recipient(id: "alice", zone: "Europe/Berlin", quietHours: [night])
        let inside = Date(timeIntervalSince1970: 1_798_151_400)  // 23:30 CET
        #expect(recipient.quietRelease(of: inside, level: .passive) == Date(timeIntervalSince1970: 1_798_178_400))
        #expect(recipient.quietRelease(of: inside, level: .active) == Date(timeIntervalSince1970: 1_798_178_400))
        #expect(recipient.quietRelease(of: inside, level: .timeSensitive) == nil)
        #expect(recipient.quietRelease(of: inside, level: .critical) == nil)
        #expect(Recipient(id: "bob", quietHours: [night]).quietRelease(of: inside, level: .active)
            == Date(timeIntervalSince1970: 1_798_182_000), "UTC without a zone: 07:00Z")
    }
}
