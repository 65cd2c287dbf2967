import ChimeCore
import Foundation
import Testing

@Suite struct FiringIDTests {
    private let due = Date(timeIntervalSince1970: 1_798_099_200.125)  // 2026-12-24T08:00:00.125Z

    @Test func theTextIsReminderAtInstantAndParsesBackToTheSameValue() throws {
        let id = FiringID(reminder: "standup", dueAt: due)
        #expect(id.text == "standup@2026-12-24T08:00:00.125Z")
        #expect(id.dueAtMilliseconds == 1_798_099_200_125)
        #expect(id.dueAt == due)
        #expect(FiringID(id.text) == id)
        let nag = FiringID(nag: 3, of: id)
        #expect(nag.text == "standup@2026-12-24T08:00:00.125Z#nag3")
        #expect(FiringID(nag.text) == nag && nag.nagBase == id)
    }

    @Test func theReminderIdMayHoldAtSignsAndNagMarkers() throws {
        let id = FiringID(reminder: "a@b#nag2@2026-12-24T08:00:00.000Z", dueAt: due)
        #expect(id.text == "a@b#nag2@2026-12-24T08:00:00.000Z@2026-12-24T08:00:00.125Z")
        let parsed = try #require(FiringID(id.text))
        #expect(parsed.reminder == "a@b#nag2@2026-12-24T08:00:00.000Z" && parsed.nag == 0)
    }

    @Test(arguments: [
        "", "@", "standup", "standup@", "@2026-12-24T08:00:00.000Z",
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
        let early = FiringID(reminder: "r", dueAtMilliseconds: .min)
        #expect(early.text == "r@0001-01-01T00:00:00.000Z" && FiringID(early.text) == early)
        let late = FiringID(reminder: "r", dueAt: .distantFuture.addingTimeInterval(1e12))
        #expect(late.text == "r@9999-12-31T23:59:59.999Z" && FiringID(late.text) == late)
        #expect(FiringID(reminder: "r", dueAt: Date(timeIntervalSinceReferenceDate: .nan)).text == "r@2001-01-01T00:00:00.000Z")
    }

    @Test func idsAreEqualExactlyWhenTheirTextsAre() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let a = FiringID(
                reminder: ReminderID(["r", "s", "r@1"].randomElement(using: &generator) ?? "r"),
                dueAtMilliseconds: Int64.random(in: 0...3, using: &generator), nag: UInt32.random(in: 0...2, using: &generator))
            let b = FiringID(
                reminder: ReminderID(["r", "s", "r@1"].randomElement(using: &generator) ?? "r"),
                dueAtMilliseconds: Int64.random(in: 0...3, using: &generator), nag: UInt32.random(in: 0...2, using: &generator))
            #expect((a == b) == (a.text == b.text))
            #expect((a.hashValue == b.hashValue) || a != b)
        }
    }

    @Test func jsonCarriesTheTextAndRefusesAnythingElse() throws {
        let id = FiringID(nag: 1, of: FiringID(reminder: "r", dueAt: due))
        let json = try JSONEncoder().encode([id])
        #expect(String(decoding: json, as: UTF8.self) == #"["r@2026-12-24T08:00:00.125Z#nag1"]"#)
        #expect(try JSONDecoder().decode([FiringID].self, from: json) == [id])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([FiringID].self, from: Data(#"["r@yesterday"]"#.utf8)) }
    }
}
