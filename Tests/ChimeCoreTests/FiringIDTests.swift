import ChimeCore
import Foundation
import Testing

@Suite struct FiringIDTests {
    private let due = Date(timeIntervalSince1970: 1_798_099_200.125)  // 2026-12-24T08:00:00.125Z
    private let standup = ReminderKey("standup", of: "team")

    @Test func theTextIsRecipientSlashReminderAtInstantAndParsesBackToTheSameValue() throws {
        let id = FiringID(standup, dueAt: due)
        #expect(id.text == "team/standup@2026-12-24T08:00:00.125Z")
        #expect(id.dueAtMilliseconds == 1_798_099_200_125)
        #expect(id.dueAt == due)
        #expect(id.reminder == "standup" && id.recipient == "team" && !id.isLegacy)
        #expect(FiringID(id.text) == id)
        let nag = FiringID(nag: 3, of: id)
        #expect(nag.text == "team/standup@2026-12-24T08:00:00.125Z#nag3")
        #expect(FiringID(nag.text) == nag && nag.nagBase == id)
    }

    @Test func theReminderIdMayHoldAtSignsSlashesAndNagMarkersAndTheRecipientIsEscaped() throws {
        let id = FiringID(ReminderKey("a/b@c#nag2@2026-12-24T08:00:00.000Z", of: "50%/x"), dueAt: due)
        #expect(id.text == "50%25%2Fx/a/b@c#nag2@2026-12-24T08:00:00.000Z@2026-12-24T08:00:00.125Z")
        let parsed = try #require(FiringID(id.text))
        #expect(parsed == id)
        #expect(parsed.reminder == "a/b@c#nag2@2026-12-24T08:00:00.000Z" && parsed.recipient == "50%/x" && parsed.nag == 0)
    }

    /// U+06DD (a prepending mark) makes one grapheme with the `%` or `/` after it: the
    /// escapes and the recipient's `/` are read scalar by scalar (the firing id fuzz target
    /// found `۝%25��nu/dp@…` parsing back to another recipient, 2026-12-07).
    @Test func aSlashOrPercentAfterAPrependingMarkIsReadAsItIs() throws {
        let found = try #require(FiringID("\u{06DD}%25\u{FFFD}\u{FFFD}nu/dp@4052-11-24T08:00:00.000Z"))
        #expect(found.recipient.rawValue == "\u{06DD}%\u{FFFD}\u{FFFD}nu" && found.reminder == "dp" && !found.isLegacy)
        #expect(found.text == "\u{06DD}%25\u{FFFD}\u{FFFD}nu/dp@4052-11-24T08:00:00.000Z")
        #expect(FiringID(found.text) == found)
        for recipient in ["x\u{06DD}", "\u{06DD}%", "\u{06DD}/", "a\u{06DD}%\u{06DD}/b"] {
            let id = FiringID(ReminderKey("r", of: RecipientID(recipient)), dueAt: due)
            #expect(FiringID(id.text) == id, "\(recipient.unicodeScalars.map { String($0.value, radix: 16) })")
            #expect(ActionJob.recipient(ofJobID: id.text + "#open@1") == RecipientID(recipient))
        }
        // A raw `%` after the mark is no escape: the text is a legacy id.
        let raw = try #require(FiringID("\u{06DD}%x/dp@2026-12-24T08:00:00.000Z"))
        #expect(raw.isLegacy && raw.reminder.rawValue == "\u{06DD}%x/dp")
        #expect(ReminderKey.unescaped("\u{06DD}%2") == nil && ReminderKey.unescaped("a\u{06DD}/") == nil)
        #expect(ReminderKey.escaped("\u{06DD}%\u{06DD}/") == "\u{06DD}%25\u{06DD}%2F")
    }

    @Test func aTextWithoutARecipientIsALegacyIdOfItsReminderIdAlone() throws {
        let legacy = try #require(FiringID("standup@2026-12-24T08:00:00.125Z"))
        #expect(legacy.isLegacy && legacy.reminder == "standup" && legacy.recipient == "")
        #expect(legacy.text == "standup@2026-12-24T08:00:00.125Z")
        #expect(legacy.resolved(to: "team") == FiringID(standup, dueAt: due))
        // A part before the first slash that is no escaped recipient: a legacy id with a slash.
        let slashed = try #require(FiringID("50%/off@2026-12-24T08:00:00.125Z"))
        #expect(slashed.isLegacy && slashed.reminder == "50%/off")
        // Read as the legacy form, the whole part before the instant is the reminder id.
        let forced = try #require(FiringID("cal/1@2026-12-24T08:00:00.125Z", legacy: true))
        #expect(forced.isLegacy && forced.reminder == "cal/1")
        let modern = try #require(FiringID("cal/1@2026-12-24T08:00:00.125Z"))
        #expect(modern.recipient == "cal" && modern.reminder == "1" && modern.legacyReading == forced)
    }

    @Test(arguments: [
        "", "@", "standup", "standup@", "@2026-12-24T08:00:00.000Z", "team/@2026-12-24T08:00:00.000Z",
        "standup@2026-12-24T08:00:00Z", "standup@2026-12-24T08:00:00.1250Z", "standup@2026-12-24t08:00:00.125z",
        "standup@2026-12-24T09:00:00.125+01:00", "standup@2026-12-24T08:00:60.000Z",
        "standup@2026-02-30T08:00:00.000Z", "standup 2026-12-24T08:00:00.125Z", "standup@2026-12-24T08:00:00.125Z#nag",
        "standup@2026-12-24T08:00:00.125Z#nag0", "standup@2026-12-24T08:00:00.125Z#nag-1",
        "standup@2026-12-24T08:00:00.125Z#nag99999999999999999999", "standup@2026-12-24T08:00:00.125Z ",
    ])
    func textsThatAreNotExactlyWhatAnIdPrintsAreRefused(text: String) {
        #expect(FiringID(text) == nil)
    }

    @Test func instantsOutsideFourDigitYearsAreClampedSoTheTextStillParses() throws {
        let r = ReminderKey("r", of: "a")
        let early = FiringID(r, dueAtMilliseconds: .min)
        #expect(early.text == "a/r@0001-01-01T00:00:00.000Z" && FiringID(early.text) == early)
        let late = FiringID(r, dueAt: .distantFuture.addingTimeInterval(1e12))
        #expect(late.text == "a/r@9999-12-31T23:59:59.999Z" && FiringID(late.text) == late)
        #expect(FiringID(r, dueAt: Date(timeIntervalSinceReferenceDate: .nan)).text == "a/r@2001-01-01T00:00:00.000Z")
    }

    @Test func idsAreEqualExactlyWhenTheirTextsAre() {
        var generator = SystemRandomNumberGenerator()
        func key() -> ReminderKey {
            ReminderKey(
                ReminderID(["r", "s", "r@1", "r/1"].randomElement(using: &generator) ?? "r"),
                of: RecipientID(["a", "b", "a/b", "a%"].randomElement(using: &generator) ?? "a"))
        }
        for _ in 0..<2_000 {
            let a = FiringID(
                key(), dueAtMilliseconds: Int64.random(in: 0...3, using: &generator), nag: UInt32.random(in: 0...2, using: &generator))
            let b = FiringID(
                key(), dueAtMilliseconds: Int64.random(in: 0...3, using: &generator), nag: UInt32.random(in: 0...2, using: &generator))
            #expect((a == b) == (a.text == b.text))
            #expect((a.hashValue == b.hashValue) || a != b)
            #expect(FiringID(a.text) == a)
        }
    }

    @Test func jsonCarriesTheTextAndRefusesAnythingElse() throws {
        let id = FiringID(nag: 1, of: FiringID(ReminderKey("r", of: "a"), dueAt: due))
        let json = try JSONEncoder().encode([id])
        #expect(String(decoding: json, as: UTF8.self) == #"["a\/r@2026-12-24T08:00:00.125Z#nag1"]"#)
        #expect(try JSONDecoder().decode([FiringID].self, from: json) == [id])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([FiringID].self, from: Data(#"["r@yesterday"]"#.utf8)) }
        let legacy = JSONDecoder()
        legacy.userInfo[FiringID.legacyTextKey] = true
        #expect(try legacy.decode([FiringID].self, from: Data(#"["a/r@2026-12-24T08:00:00.125Z"]"#.utf8)).first?.reminder == "a/r")
    }
}

@Suite struct ReminderKeyTests {
    @Test func aKeyHoldsItsIdAndRecipientAndOrdersByIdThenRecipient() throws {
        let key = ReminderKey("standup", of: "team")
        #expect(key.id == "standup" && key.recipient == "team" && !key.isLegacy)
        #expect(key.text == "team/standup")
        let keys = [ReminderKey("b", of: "a"), ReminderKey("a", of: "z"), ReminderKey("a", of: "a-b"), ReminderKey("a", of: "a"),
                    ReminderKey("a-1", of: "a"), ReminderKey.first(of: "a")]
        #expect(keys.sorted().map(\.text) == ["a", "a/a", "a-b/a", "z/a", "a/a-1", "a/b"])
        #expect(keys.filter { $0.hasID("a") }.count == 4, "the legacy key and the three recipients' keys of a")
    }

    @Test func aLegacyKeyNamesAReminderByIdAlone() throws {
        let legacy = ReminderKey(legacy: "standup")
        #expect(legacy.isLegacy && legacy.id == "standup" && legacy.recipient == "" && legacy.text == "standup")
        #expect(legacy.resolved(to: "team") == ReminderKey("standup", of: "team"))
    }

    @Test func theStorageRoundTripsThroughJSONAndRefusesDamagedForms() throws {
        let key = ReminderKey("r", of: "alice")
        let json = try JSONEncoder().encode(key)
        #expect(String(decoding: json, as: UTF8.self) == #""r\u0000alice""#)
        #expect(try JSONDecoder().decode(ReminderKey.self, from: json) == key)
        #expect(try JSONDecoder().decode(ReminderKey.self, from: Data(#""r""#.utf8)) == ReminderKey(legacy: "r"), "an earlier version's id")
        for damaged in [#""""#, #""r\u0000""#, #""\u0000a""#, #""r\u0000a\u0000b""#] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(ReminderKey.self, from: Data(damaged.utf8)) }
        }
    }

    @Test(arguments: [("alice", "alice"), ("a/b", "a%2Fb"), ("50%", "50%25"), ("%2F", "%252F")])
    func recipientsEscapeInTheTextForm(recipient: String, escaped: String) throws {
        #expect(ReminderKey.escaped(recipient) == escaped)
        #expect(ReminderKey.unescaped(Substring(escaped)) == recipient)
    }

    @Test(arguments: ["", "%", "%2", "%2f", "%41", "a%"])
    func textsThatAreNoEscapedRecipientAreRefused(text: String) {
        #expect(ReminderKey.unescaped(Substring(text)) == nil)
    }
}
