import ChimeCore
import Foundation
import Testing

@Suite struct TriggerSpreadTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z

    /// The hash and delay are fixed and documented: these values are pinned, and the Python
    /// client's `spread_delay_ms` computes the same (clients/python/chime_client/spread.py).
    @Test(arguments: [
        ("alice", "standup", UInt32(0x605B_39BA), 338.752),
        ("user-000001", "daily", UInt32(0xA6AC_76C8), 585.962),
    ])
    func delayIsTheDocumentedHashOfTheNominalFiringID(recipient: String, id: String, hash: UInt32, delay: Double) {
        let key = ReminderKey(ReminderID(id), of: RecipientID(recipient))
        let nominal = FiringID(key, dueAt: Self.t0)
        #expect(Trigger.spreadHash(of: nominal) == hash)
        #expect(Trigger.spreadDelay(of: nominal, spread: 900) == delay)
        let trigger = Trigger(start: .instant(Self.t0), spread: 900)
        #expect(trigger.fireInstant(eventInstant: Self.t0, of: key) == Self.t0.addingTimeInterval(delay))
        // Deterministic: the same on every call, in every process (no seeded Hasher).
        #expect(trigger.fireInstant(eventInstant: Self.t0, of: key) == trigger.fireInstant(eventInstant: Self.t0, of: key))
    }

    @Test func delaysOfABurstStayInsideTheBoundAndSpreadEvenly() {
        let trigger = Trigger(start: .instant(Self.t0), spread: 600)
        var buckets = [Int](repeating: 0, count: 10)
        for index in 0..<10_000 {
            let key = ReminderKey("daily", of: RecipientID("user-\(index)"))
            let delay = trigger.spreadDelay(of: key, nominalFireInstant: Self.t0)
            #expect(delay >= 0 && delay < 600)
            #expect(abs(delay * 1000 - (delay * 1000).rounded()) < 1e-6, "whole milliseconds")
            buckets[Int(delay / 60)] += 1
        }
        for count in buckets { #expect((850...1150).contains(count), "buckets \(buckets)") }
    }

    @Test func withoutSpreadTheFireInstantIsTheEventLessTheOffset() {
        let key = ReminderKey("r", of: "alice")
        let trigger = Trigger(start: .instant(Self.t0), offset: 300)
        #expect(trigger.fireInstant(eventInstant: Self.t0, of: key) == Self.t0.addingTimeInterval(-300))
        #expect(trigger.spreadDelay(of: key, nominalFireInstant: Self.t0) == 0)
    }

    @Test func spreadAndRemindBeforeCombine() {
        let key = ReminderKey("standup", of: "alice")
        let trigger = Trigger(start: .instant(Self.t0), offset: 300, spread: 900)
        let nominal = Self.t0.addingTimeInterval(-300)
        let expected = nominal.addingTimeInterval(Trigger.spreadDelay(of: FiringID(key, dueAt: nominal), spread: 900))
        #expect(trigger.fireInstant(eventInstant: Self.t0, of: key) == expected)
    }

    @Test func firstEventFindsAnEventWhoseSpreadFiringIsStillAhead() throws {
        // Daily at 08:00 with a 15-minute spread: alice's 08:00 firing is at 08:05:38.752.
        let key = ReminderKey("standup", of: "alice")
        let trigger = Trigger(start: .instant(Self.t0), repeatRule: RepeatRule(unit: .day, interval: 1), spread: 900)
        let recurrence = try trigger.makeRecurrence()
        let firing = Self.t0.addingTimeInterval(338.752)
        // At 08:03 the 08:00 event has not fired yet: it is the first one firing at or after.
        let at0803 = trigger.firstEvent(firingOnOrAfter: Self.t0.addingTimeInterval(180), in: recurrence, of: key)
        #expect(at0803?.instant == Self.t0)
        #expect(trigger.firstEvent(firingOnOrAfter: firing, in: recurrence, of: key)?.instant == Self.t0)
        // A millisecond later it has: the next day's.
        let after = trigger.firstEvent(firingOnOrAfter: firing.addingTimeInterval(0.001), in: recurrence, of: key)
        #expect(after?.instant == Self.t0.addingTimeInterval(86_400))
        #expect(trigger.eventInstant(fireInstant: firing, of: key, in: recurrence) == Self.t0)
    }

    @Test func spreadIsValidatedParsedAndCoded() throws {
        #expect(try Trigger.parseSpread("15m") == 900)
        #expect(throws: ValidationError.self) { try Trigger.parseSpread("2d") }
        #expect(throws: ValidationError.self) { try Trigger(start: .instant(Self.t0), spread: 0).makeRecurrence() }
        #expect(throws: ValidationError.self) { try Trigger(start: .instant(Self.t0), spread: .nan).makeRecurrence() }
        let json = #"{"at":"2026-12-24T08:00:00Z","spread":"15m"}"#
        let trigger = try JSONDecoder().decode(Trigger.self, from: Data(json.utf8))
        #expect(trigger.spread == 900)
        let encoded = String(decoding: try JSONEncoder().encode(trigger), as: UTF8.self)
        #expect(encoded.contains(#""spread":900"#))
    }

    @Test func aSpreadReminderRoundTripsInBinaryAndOldBytesStillDecode() throws {
        let plain = Reminder(
            id: "r", recipient: "u", content: Content(), trigger: Trigger(start: .instant(Date(timeIntervalSinceReferenceDate: 0))))
        // Format 1 as written before spread existed: version, id, recipient, flags (enabled), instant 0.
        let old: [UInt8] = [1, 1, 0x72, 1, 0x75, 0x01, 0, 0, 0, 0, 0, 0, 0, 0]
        #expect(plain.binaryEncoded() == old)
        #expect(try Reminder(binary: old) == plain)
        var spread = plain
        spread.trigger.spread = 900
        // Bit 20 set (flags varint 0x81 0x80 0x40), then the f64 900 after everything else.
        let golden: [UInt8] = [1, 1, 0x72, 1, 0x75, 0x81, 0x80, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0x8C, 0x40]
        #expect(spread.binaryEncoded() == golden)
        #expect(try Reminder(binary: golden) == spread)
        #expect(try Reminder.binarySummary(in: golden[...]).hasSpread)
    }
}
