import ChimeTestSupport
import Foundation
import Testing

@testable import ChimeCore

/// The compact binary form of a reminder: exact round trips, sizes and determinism.
@Suite struct ReminderBinaryTests {
    @Test func oneShotWithHundredByteBodyTakes137Bytes() throws {
        let bytes = ReminderBinaryFixtures.oneShot.binaryEncoded()
        // version 1 + id 1+15 + recipient 1+9 + flags 1 + body 1+100 + instant 8
        #expect(bytes.count == 137)
        #expect(Array(bytes.prefix(2)) == [1, 15])
        #expect(bytes[27] == 0b101, "flags: enabled and body")
        #expect(bytes[28] == 100)
        #expect(try Reminder(binary: bytes) == ReminderBinaryFixtures.oneShot)
    }

    @Test func encodedArrayHoldsNoSpareCapacity() {
        for reminder in ReminderBinaryFixtures.handBuilt {
            let bytes = reminder.binaryEncoded()
            // The exact size is reserved; malloc may round up to its next size class only.
            #expect(bytes.capacity < bytes.count + 16)
        }
    }

    @Test(arguments: ReminderBinaryFixtures.handBuilt)
    func handBuiltRemindersRoundTripExactly(reminder: Reminder) throws {
        try expectExactRoundTrip(reminder)
    }

    @Test func everyFieldSurvives() throws {
        let reminder = ReminderBinaryFixtures.everything
        let decoded = try Reminder(binary: reminder.binaryEncoded())
        #expect(decoded == reminder)
        #expect(decoded.content.userInfo?["negativeZero"] == .real(-0.0))
        if case .real(let value) = decoded.content.userInfo?["negativeZero"] {
            #expect(value.sign == .minus)
        }
        #expect(decoded.trigger.recurrenceRule?.until == ReminderBinaryFixtures.everyRulePart.until)
        #expect(decoded.trigger.recurrenceDates == reminder.trigger.recurrenceDates)
        #expect(decoded.trigger.monthEnd == .clamp)
        #expect(decoded.enabled == false)
        #expect(decoded.nag == NagPolicy(count: 3, interval: 600))
    }

    @Test func nilAndEmptyStayDistinct() throws {
        var reminder = ReminderBinaryFixtures.oneShot
        reminder.content = Content(title: "", userInfo: [:])
        let decoded = try Reminder(binary: reminder.binaryEncoded())
        #expect(decoded.content.title == "")
        #expect(decoded.content.body == nil)
        #expect(decoded.content.userInfo == [:])
        #expect(try Reminder(binary: ReminderBinaryFixtures.oneShot.binaryEncoded()).content.userInfo == nil)
    }

    @Test func doublesKeepTheirBitPatterns() throws {
        var reminder = ReminderBinaryFixtures.oneShot
        let signallingNaN = Double(bitPattern: 0x7FF4_0000_0000_0001)
        reminder.trigger.offset = signallingNaN
        reminder.trigger.misfireThreshold = -0.0
        reminder.trigger.start = .instant(Date(timeIntervalSinceReferenceDate: -.leastNonzeroMagnitude))
        let bytes = reminder.binaryEncoded()
        let decoded = try Reminder(binary: bytes)
        #expect(decoded.trigger.offset?.bitPattern == signallingNaN.bitPattern)
        #expect(decoded.trigger.misfireThreshold?.bitPattern == (-0.0).bitPattern)
        #expect(decoded.binaryEncoded() == bytes)
    }

    @Test func ruleTextWouldLoseWhatTheBinaryFormKeeps() throws {
        // The RFC 5545 text keeps UNTIL to the second and cannot be parsed back from an
        // unvalidated rule; the binary form is field by field, so both come back.
        let fractional = RecurrenceRule(frequency: .daily, until: .instant(Date(timeIntervalSinceReferenceDate: 0.5)))
        #expect(try RecurrenceRule(parsing: fractional.description) != fractional)
        let unvalidated = RecurrenceRule(frequency: .weekly, interval: 0)
        #expect(throws: ValidationError.self) { try RecurrenceRule(parsing: unvalidated.description) }
        for rule in [fractional, unvalidated] {
            var reminder = ReminderBinaryFixtures.oneShot
            reminder.trigger.recurrenceRule = rule
            try expectExactRoundTrip(reminder)
        }
    }

    @Test(arguments: [
        #"{"id":"standup","recipient":"team","content":{"title":"Stand-up","body":"Room 4","sound":"default","badge":1,"userInfo":{"room":4,"tags":["a",1.5,true]},"category":"meeting","threadId":"daily"},"trigger":{"at":"2026-12-24T09:00:00","timeZone":"Europe/Berlin","repeat":"day"}}"#,
        #"{"id":"ics-1","recipient":"bob","content":{"badge":"+1"},"trigger":{"at":"2026-12-24T08:00:00.123Z","rrule":"FREQ=MONTHLY;BYDAY=-1FR;UNTIL=20271231T235959Z","rdates":["2026-12-25T10:00:00Z","2026-12-26T10:00:00"],"exdates":["2027-01-29T08:00:00Z"],"monthEnd":"clamp","before":"5m","misfire":"fireAll","misfireThreshold":3600},"enabled":false,"nag":{"count":3,"interval":"10m"}}"#,
    ])
    func remindersFromJSONRoundTrip(json: String) throws {
        let reminder = try decodeWire(Reminder.self, json)
        _ = try reminder.validate()
        try expectExactRoundTrip(reminder)
    }

    @Test func randomRemindersRoundTripExactlyAndDeterministically() throws {
        let seed: UInt64 = 0xC41E_2026
        var maker = RandomReminderMaker(seed: seed)
        var totalBytes = 0
        for index in 0..<2_000 {
            let reminder = maker.reminder()
            let bytes = reminder.binaryEncoded()
            totalBytes += bytes.count
            guard let decoded = try? Reminder(binary: bytes), decoded == reminder, reminder.binaryEncoded() == bytes,
                decoded.binaryEncoded() == bytes
            else {
                Issue.record("seed \(seed), reminder \(index) does not round-trip: \(reminder)")
                return
            }
            #expect(try Reminder.binaryRecipient(in: bytes) == reminder.recipient)
            #expect(try Reminder.binarySummary(in: bytes[...]) == Reminder.BinarySummary(
                recipient: reminder.recipient, isRepeating: reminder.trigger.isRepeating, hasNag: reminder.nag != nil,
                hasOffset: reminder.trigger.offset != nil))
        }
        #expect(totalBytes > 0)
    }

    @Test func recipientIsReadWithoutTheRest() throws {
        for reminder in ReminderBinaryFixtures.handBuilt {
            let bytes = reminder.binaryEncoded()
            #expect(try Reminder.binaryRecipient(in: bytes) == Reminder(binary: bytes).recipient)
        }
        // Only the version, id and recipient are read: damage after them goes unnoticed.
        var bytes = ReminderBinaryFixtures.oneShot.binaryEncoded()
        bytes[27] = 0xFF
        #expect(try Reminder.binaryRecipient(in: bytes) == "user-0001")
        let slice = ([9, 9] + ReminderBinaryFixtures.oneShot.binaryEncoded())[2...]
        #expect(try Reminder.binaryRecipient(in: slice) == "user-0001")
        #expect(try Reminder(binary: slice) == ReminderBinaryFixtures.oneShot)
    }

    @Test func userInfoKeysAreWrittenInOrder() {
        let reminder = Reminder(
            id: "r", recipient: "u",
            content: Content(userInfo: ["b": .integer(2), "a": .integer(1), "c": .integer(3)]),
            trigger: Trigger(start: .instant(Date(timeIntervalSinceReferenceDate: 0))))
        // version, id, recipient, flags (enabled, userInfo), count, then a=1, b=2, c=3.
        let expected: [UInt8] = [1, 1, 0x72, 1, 0x75, 0x21, 3, 1, 0x61, 1, 2, 1, 0x62, 1, 4, 1, 0x63, 1, 6]
        #expect(Array(reminder.binaryEncoded().prefix(expected.count)) == expected)
    }

    private func expectExactRoundTrip(_ reminder: Reminder, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = reminder.binaryEncoded()
        let decoded = try Reminder(binary: bytes)
        #expect(decoded == reminder, sourceLocation: sourceLocation)
        // Equal bytes after a second trip also pin bit patterns that == ignores (−0.0).
        #expect(decoded.binaryEncoded() == bytes, sourceLocation: sourceLocation)
        #expect(reminder.binaryEncoded() == bytes, "deterministic", sourceLocation: sourceLocation)
    }
}

@Suite struct ReminderBinaryOffsetTests {
    @Test(arguments: [nil, MisfirePolicy.fireAll], [nil, 120.0])
    func reminderWithAnOffsetRoundTrips(misfire: MisfirePolicy?, threshold: Double?) throws {
        let reminder = Reminder(
            id: "r1", recipient: "alice", content: Content(title: "t", body: "b", badgeChange: .increment, category: "c"),
            trigger: Trigger(
                start: .wallClock(LocalDateTime(year: 2026, month: 12, day: 24, hour: 8), zoneIdentifier: "recipient"),
                repeatRule: RepeatRule(unit: .minute, interval: 1), offset: 90, misfire: misfire, misfireThreshold: threshold),
            nag: NagPolicy(count: 2, interval: 60))
        let bytes = reminder.binaryEncoded()
        #expect(try Reminder(binary: bytes) == reminder)
        #expect(try Reminder.binarySummary(in: bytes[...]).hasOffset)
    }
}
