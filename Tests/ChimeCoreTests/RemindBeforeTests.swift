import Foundation
import Testing

@testable import ChimeCore

@Suite struct RemindBeforeTests {
    @Test(arguments: [("5m", 300.0), ("10m", 600), ("15m", 900), ("30m", 1800), ("1h", 3600), ("2h", 7200), ("1d", 86_400), ("1h30m", 5400)])
    func parsesBeforeDurations(text: String, seconds: Double) throws {
        #expect(try Trigger.parseOffset(text) == seconds)
    }

    @Test func rejectsMalformedOrHugeOffsets() {
        _ = expectValidationError(.invalidArgument, field: "trigger.before") { _ = try Trigger.parseOffset("5 minutes") }
        let huge = expectValidationError(.invalidArgument, field: "trigger.before") { _ = try Trigger.parseOffset("367d") }
        #expect(huge?.message == "remind-before must be 0 s to 366 days before the event, not 52w3d")
        _ = expectValidationError(.invalidArgument, field: "trigger.before") {
            _ = try Trigger(start: .instant(Date()), offset: -1).makeRecurrence()
        }
    }

    @Test func beforeDecodesFromSecondsOrDurationAndEncodesSeconds() throws {
        let fromText = try decodeWire(Trigger.self, #"{"at":"2026-12-24T09:00:00Z","before":"15m"}"#)
        #expect(fromText.offset == 900)
        #expect(try wireJSON(fromText) == #"{"at":"2026-12-24T09:00:00.000Z","before":900}"#)
        #expect(try decodeWire(Trigger.self, #"{"at":"2026-12-24T09:00:00Z","before":300}"#).offset == 300)
        let plain = try decodeWire(Trigger.self, #"{"at":"2026-12-24T09:00:00Z"}"#)
        #expect(plain.offset == nil)
        #expect(try wireJSON(plain) == #"{"at":"2026-12-24T09:00:00.000Z"}"#)
        #expect(throws: DecodingError.self) { try decodeWire(Trigger.self, #"{"at":"2026-12-24T09:00:00Z","before":"soon"}"#) }
    }

    @Test func repeatsApplyToTheEventAndFiringsComeBefore() throws {
        // Daily 09:00 Berlin meeting, reminded 15 minutes before; DST ends on 2026-10-25.
        let trigger = Trigger(
            start: .wallClock(try local("2026-10-24T09:00:00"), zoneIdentifier: "Europe/Berlin"),
            repeatRule: RepeatRule(unit: .day), offset: 900)
        let recurrence = try trigger.makeRecurrence()
        let events = firstOccurrences(of: recurrence, count: 2)
        #expect(events.map { RFC3339.format($0.instant) } == ["2026-10-24T07:00:00.000Z", "2026-10-25T08:00:00.000Z"])
        #expect(events.map { RFC3339.format(trigger.fireInstant(eventInstant: $0.instant)) } == [
            "2026-10-24T06:45:00.000Z", "2026-10-25T07:45:00.000Z",
        ])
        #expect(trigger.eventInstant(fireInstant: try utc("2026-10-24T06:45:00Z")) == (try utc("2026-10-24T07:00:00Z")))
    }

    @Test func firstEventIsChosenByItsFireInstant() throws {
        let trigger = Trigger(start: .instant(try utc("2026-12-24T09:00:00Z")), repeatRule: RepeatRule(unit: .hour), offset: 600)
        let recurrence = try trigger.makeRecurrence()
        // At 09:55 the 10:00 event's firing (09:50) has passed; the next firing is 10:50 for 11:00.
        let next = try #require(trigger.firstEvent(firingOnOrAfter: try utc("2026-12-24T09:55:00Z"), in: recurrence))
        #expect(RFC3339.format(next.instant) == "2026-12-24T11:00:00.000Z")
        #expect(next.index == 2)
        let exact = try #require(trigger.firstEvent(firingOnOrAfter: try utc("2026-12-24T09:50:00Z"), in: recurrence))
        #expect(RFC3339.format(exact.instant) == "2026-12-24T10:00:00.000Z")
    }

    @Test func firingsRecordTheirEvent() throws {
        let event = try utc("2026-12-24T09:00:00Z")
        let firing = Firing(
            reminderId: "m", recipient: "alice", dueAt: event.addingTimeInterval(-900), content: Content(), eventAt: event)
        #expect(firing.firingId.text == "alice/m@2026-12-24T08:45:00.000Z")
        #expect(
            try wireJSON(firing)
                == #"{"attempt":1,"content":{},"dueAt":"2026-12-24T08:45:00.000Z","eventAt":"2026-12-24T09:00:00.000Z","firingId":"alice/m@2026-12-24T08:45:00.000Z","late":false,"recipient":"alice","reminderId":"m"}"#
        )
        let plain = Firing(reminderId: "m", recipient: "alice", dueAt: event, content: Content())
        #expect(try !wireJSON(plain).contains("eventAt"))
    }
}

@Suite struct MinuteRulesTests {
    @Test func repeatsShorterThanAMinuteAreRejectedWithAClearMessage() throws {
        let zero = expectValidationError(.invalidArgument, field: "trigger.repeat.interval") {
            try RepeatRule(unit: .minute, interval: 0).validate()
        }
        #expect(zero?.message.hasPrefix("repeats shorter than 60 s are not supported") == true)
        let seconds = expectValidationError(.invalidArgument, field: "trigger.repeat") { _ = try RepeatUnit(parsing: "second") }
        #expect(seconds?.message == "repeats shorter than 60 s are not supported; the shortest repeat is every minute")
        let unknown = expectValidationError(.invalidArgument, field: "trigger.repeat") { _ = try RepeatUnit(parsing: "fortnight") }
        #expect(unknown?.message == "'fortnight' is not a repeat unit; use minute, hour, day, week, month, year")
        #expect(try RepeatUnit(parsing: "minute") == .minute)
        #expect(RepeatRule.minimumSeconds == 60)
    }

    @Test func secondRepeatsInJSONSayWhy() throws {
        for json in [
            #"{"at":"2026-12-24T09:00:00Z","repeat":"second"}"#, #"{"at":"2026-12-24T09:00:00Z","repeat":{"unit":"second"}}"#,
        ] {
            do {
                _ = try decodeWire(Trigger.self, json)
                Issue.record("decoded \(json)")
            } catch let DecodingError.dataCorrupted(context) {
                #expect(context.debugDescription == "repeats shorter than 60 s are not supported; the shortest repeat is every minute")
            }
        }
        let daily = try decodeWire(Trigger.self, #"{"at":"2026-12-24T09:00:00Z","repeat":"day"}"#)
        #expect(daily.repeatRule == RepeatRule(unit: .day))
    }

    @Test func truncateToMinuteZeroesTheSeconds() throws {
        let instant = Trigger(start: .instant(try utc("2026-12-24T09:41:37.250Z")), repeatRule: RepeatRule(unit: .day), offset: 60)
        let truncated = instant.truncatedToMinute()
        #expect(truncated.start == .instant(try utc("2026-12-24T09:41:00Z")))
        #expect(truncated.repeatRule == RepeatRule(unit: .day) && truncated.offset == 60)
        let before1970 = TriggerStart.instant(try utc("1969-12-31T23:59:59.500Z")).truncatedToMinute()
        #expect(before1970 == .instant(try utc("1969-12-31T23:59:00Z")))
        let wall = TriggerStart.wallClock(try local("2026-12-24T09:41:37"), zoneIdentifier: "Asia/Kolkata")
        #expect(wall.truncatedToMinute() == .wallClock(try local("2026-12-24T09:41:00"), zoneIdentifier: "Asia/Kolkata"))
        let whole = TriggerStart.instant(try utc("2026-12-24T09:41:00Z"))
        #expect(whole.truncatedToMinute() == whole)
    }
}
