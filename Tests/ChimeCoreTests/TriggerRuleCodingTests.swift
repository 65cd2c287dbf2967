import Foundation
import Testing

@testable import ChimeCore

/// The trigger JSON keys for rules (`rrule`, `rdates`, `exdates`, `monthEnd`), and that
/// triggers without them read and write as before.
@Suite struct TriggerRuleCodingTests {
    private func decode(_ json: String) throws -> Trigger {
        try JSONDecoder().decode(Trigger.self, from: Data(json.utf8))
    }

    private func encode(_ trigger: Trigger) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(trigger), as: UTF8.self)
    }

    @Test func decodesAndEncodesTheRuleKeys() throws {
        let trigger = try decode(
            #"{"at": "2026-03-02T09:00:00", "timeZone": "Europe/Berlin", "rrule": "FREQ=WEEKLY;BYDAY=MO,WE", "rdates": ["2026-03-05T09:00:00"], "exdates": ["2026-03-04T08:00:00Z"], "monthEnd": "clamp"}"#
        )
        #expect(trigger.recurrenceRule == (try RecurrenceRule(parsing: "FREQ=WEEKLY;BYDAY=MO,WE")))
        #expect(trigger.recurrenceDates == [.local(try local("2026-03-05T09:00"))])
        #expect(trigger.exceptionDates == [.instant(try utc("2026-03-04T08:00:00Z"))])
        #expect(trigger.monthEnd == .clamp)
        #expect(trigger.isRepeating)
        #expect(
            try encode(trigger)
                == #"{"at":"2026-03-02T09:00:00","exdates":["2026-03-04T08:00:00.000Z"],"monthEnd":"clamp","rdates":["2026-03-05T09:00:00"],"rrule":"FREQ=WEEKLY;BYDAY=MO,WE","timeZone":"Europe/Berlin"}"#
        )
        #expect(try decode(try encode(trigger)) == trigger)
        #expect(utcTexts(of: try trigger.makeRecurrence(), count: 4) == [
            "2026-03-02T08:00:00Z", "2026-03-05T08:00:00Z", "2026-03-09T08:00:00Z", "2026-03-11T08:00:00Z",
        ])
    }

    @Test func triggersWithoutRuleKeysReadAndWriteAsBefore() throws {
        let json = #"{"at":"2026-12-24T09:00:00","repeat":{"interval":2,"unit":"day"},"timeZone":"Europe/Berlin"}"#
        let trigger = try decode(json)
        #expect(trigger.recurrenceRule == nil && trigger.recurrenceDates.isEmpty && trigger.exceptionDates.isEmpty)
        #expect(trigger.monthEnd == .skip)
        #expect(try encode(trigger) == json)
        #expect(try encode(try decode(#"{"at":"2026-12-24T08:00:00Z"}"#)) == #"{"at":"2026-12-24T08:00:00.000Z"}"#)
        let recurrence = try trigger.makeRecurrence()
        #expect(recurrence.recurrenceRule?.description == "FREQ=DAILY;INTERVAL=2")
        #expect(recurrence.rule == RepeatRule(unit: .day, interval: 2))
    }

    @Test func aMalformedRuleNamesTheRRuleKey() {
        let error = #expect(throws: DecodingError.self) {
            try decode(#"{"at": "2026-12-24T08:00:00Z", "rrule": "FREQ=SECONDLY"}"#)
        }
        guard case .dataCorrupted(let context)? = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == ["rrule"])
        #expect(context.debugDescription.contains("repeats shorter than 60 s are not allowed"))
    }

    @Test func repeatAndRRuleTogetherAreRefused() throws {
        let trigger = try decode(#"{"at": "2026-12-24T08:00:00Z", "repeat": "day", "rrule": "FREQ=DAILY"}"#)
        let error = #expect(throws: ValidationError.self) { try trigger.makeRecurrence() }
        #expect(error?.field == "trigger.rrule")
        #expect(error?.message == "give repeat or rrule, not both")
    }

    @Test func aOneShotIsNotRepeatingButRDatesMakeItSo() throws {
        #expect(!(try decode(#"{"at": "2026-12-24T08:00:00Z"}"#)).isRepeating)
        #expect(try decode(#"{"at": "2026-12-24T08:00:00Z", "rdates": ["2026-12-25T08:00:00Z"]}"#).isRepeating)
        #expect(try decode(#"{"at": "2026-12-24T08:00:00Z", "exdates": ["2026-12-25T08:00:00Z"]}"#).isRepeating == false)
    }
}
