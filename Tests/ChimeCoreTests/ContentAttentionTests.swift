import ChimeTestSupport
import Foundation
import Testing

@testable import ChimeCore

/// The attention fields of content (subtitle, interruption level, relevance score, target,
/// filter criteria, `hasAction`): JSON, validation and the binary form.
@Suite struct ContentAttentionTests {
    let decoder = JSONDecoder()

    func encoded(_ content: Content) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(content), as: UTF8.self)
    }

    @Test func everyFieldDecodesFromItsKey() throws {
        let json = #"""
            {"title": "T", "subtitle": "S", "interruptionLevel": "timeSensitive", "relevanceScore": 0.75,
             "targetContentIdentifier": "thread-9", "filterCriteria": "work", "hasAction": false}
            """#
        let content = try decoder.decode(Content.self, from: Data(json.utf8))
        #expect(content == Content(
            title: "T", subtitle: "S", interruptionLevel: .timeSensitive, relevanceScore: 0.75,
            targetContentIdentifier: "thread-9", filterCriteria: "work", hasAction: false))
        #expect(try encoded(content) == #"{"filterCriteria":"work","hasAction":false,"interruptionLevel":"timeSensitive","relevanceScore":0.75,"subtitle":"S","targetContentIdentifier":"thread-9","title":"T"}"#)
    }

    @Test func defaultsAreOmittedSoOldContentEncodesAsBefore() throws {
        let explicit = try decoder.decode(
            Content.self, from: Data(#"{"title": "T", "interruptionLevel": "active", "hasAction": true}"#.utf8))
        #expect(explicit == Content(title: "T"))
        #expect(explicit.interruptionLevel == .active)
        #expect(explicit.hasAction)
        #expect(!explicit.hasAttentionFields)
        #expect(try encoded(explicit) == #"{"title":"T"}"#)
    }

    @Test func anUnknownLevelIsRefusedAtDecode() {
        #expect(throws: DecodingError.self) {
            try decoder.decode(Content.self, from: Data(#"{"interruptionLevel": "urgent"}"#.utf8))
        }
    }

    @Test(arguments: [0.0, 0.5, 1.0])
    func relevanceScoresInZeroToOneAreValid(score: Double) throws {
        try Content(relevanceScore: score).validate()
    }

    @Test(arguments: [-0.001, 1.000_001, .infinity, .nan])
    func relevanceScoresOutsideZeroToOneAreRefused(score: Double) {
        #expect {
            try Content(relevanceScore: score).validate()
        } throws: { error in
            (error as? ValidationError).map { $0.code == .invalidArgument && $0.field == "content.relevanceScore" } ?? false
        }
    }

    @Test func levelsAreOrderedByUrgencyAndOnlyTheTopTwoBreakThrough() {
        #expect(InterruptionLevel.allCases.sorted() == [.passive, .active, .timeSensitive, .critical])
        #expect(InterruptionLevel.allCases.filter(\.breaksThroughQuietHours) == [.timeSensitive, .critical])
        for level in InterruptionLevel.allCases {
            #expect(InterruptionLevel(binaryTag: level.binaryTag) == level)
        }
        #expect(InterruptionLevel(binaryTag: 4) == nil)
    }

    @Test func aSubtitleCountsAsAlertText() {
        #expect(Content(subtitle: "S").presentedParts == .alert)
        #expect(Content(interruptionLevel: .critical).presentedParts == [])
    }

    @Test func theBinaryFormAddsExactlyTheFieldsGiven() throws {
        var reminder = ReminderBinaryFixtures.oneShot
        reminder.content.subtitle = "S"
        // The flags grow from 1 byte to 4 (bit 25); the subtitle takes 1 + 1.
        #expect(reminder.binaryEncoded().count == 137 + 3 + 2)
        reminder.content.interruptionLevel = .critical
        let bytes = reminder.binaryEncoded()
        #expect(bytes.count == 137 + 3 + 2 + 1)
        #expect(Array(bytes.suffix(3)) == [1, UInt8(ascii: "S"), 3])
        #expect(try Reminder(binary: bytes) == reminder)
        reminder.content.hasAction = false
        // hasAction false is flag bit 30 alone: no bytes of its own, but a fifth flags byte.
        #expect(reminder.binaryEncoded().count == bytes.count + 1)
        #expect(try Reminder(binary: reminder.binaryEncoded()) == reminder)
    }

    @Test func anActiveLevelMarkedPresentIsRefused() throws {
        var reminder = ReminderBinaryFixtures.oneShot
        reminder.content.interruptionLevel = .passive
        var bytes = reminder.binaryEncoded()
        #expect(bytes.last == 0)
        bytes[bytes.count - 1] = 1
        #expect(throws: BinaryDecodingError.self) { try Reminder(binary: bytes) }
        bytes[bytes.count - 1] = 4
        #expect(throws: BinaryDecodingError.self) { try Reminder(binary: bytes) }
    }

    @Test func randomRemindersWithAttentionRoundTripExactly() throws {
        let seed: UInt64 = 0xA77E_2026
        var maker = RandomReminderMaker(seed: seed, attention: true)
        var levels: Set<InterruptionLevel> = []
        for index in 0..<1_000 {
            let reminder = maker.reminder()
            levels.insert(reminder.content.interruptionLevel)
            let bytes = reminder.binaryEncoded()
            guard let decoded = try? Reminder(binary: bytes), decoded == reminder, decoded.binaryEncoded() == bytes else {
                Issue.record("seed \(seed), reminder \(index) does not round-trip: \(reminder)")
                return
            }
        }
        #expect(levels == Set(InterruptionLevel.allCases))
    }
}
