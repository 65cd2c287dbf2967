import ChimeTestSupport
import Foundation
import Testing

@testable import ChimeCore

/// Damaged binary reminders: every failure is a `BinaryDecodingError` with its reason and
/// offset, never a trap.
@Suite struct ReminderBinaryDamageTests {
    /// Version 1, id "r", recipient "u": the 5 bytes before the flags.
    private let header: [UInt8] = [1, 1, 0x72, 1, 0x75]
    /// The 8 bytes of an instant start at 0.
    private let zeroInstant = [UInt8](repeating: 0, count: 8)

    @Test func everyTruncatedPrefixThrows() {
        for reminder in [ReminderBinaryFixtures.oneShot, ReminderBinaryFixtures.everything]
            + ReminderBinaryFixtures.handBuilt.suffix(5)
        {
            let bytes = reminder.binaryEncoded()
            for length in 0..<bytes.count {
                let error = decodingError(bytes.prefix(length))
                #expect(error?.reason == .truncated || error?.reason == .lengthPastEnd, "prefix of \(length) bytes")
                #expect((0...length).contains(error?.offset ?? -1))
            }
        }
    }

    @Test func randomDamageDecodesOrThrowsNeverTraps() {
        let seed: UInt64 = 0xBAD_B17E
        var random = SeededRandomNumberGenerator(seed: seed)
        let originals = [ReminderBinaryFixtures.oneShot, ReminderBinaryFixtures.everything].map { $0.binaryEncoded() }
        var decodedCount = 0
        var reasons: [BinaryDecodingError.Reason: Int] = [:]
        for round in 0..<5_000 {
            var bytes = originals[round % originals.count]
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[position] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
                case 1: bytes[position] = UInt8.random(in: 0...255, using: &random)
                case 2: bytes.insert(UInt8.random(in: 0...255, using: &random), at: position)
                default: bytes.remove(at: position)
                }
            }
            do {
                let reminder = try Reminder(binary: bytes)
                decodedCount += 1
                // Decoding accepts only canonical bytes, so encoding gives the input back.
                #expect(reminder.binaryEncoded() == bytes, "seed \(seed), round \(round)")
            } catch {
                reasons[error.reason, default: 0] += 1
                #expect((0...bytes.count).contains(error.offset), "seed \(seed), round \(round): \(error)")
            }
        }
        #expect(decodedCount + reasons.values.reduce(0, +) == 5_000)
        #expect(reasons.count >= 5, "damage reaches several checks: \(reasons)")
    }

    @Test func emptyInputIsTruncated() {
        expectError(.truncated, offset: 0, [])
    }

    @Test func unknownVersionIsRefused() {
        var bytes = ReminderBinaryFixtures.oneShot.binaryEncoded()
        for version: UInt8 in [0, 2, 0xFF] {
            bytes[0] = version
            expectError(.unknownVersion, offset: 0, bytes)
        }
    }

    @Test func varintPastSixtyFourBitsOverflows() {
        expectError(.varintOverflow, offset: 1, [1] + [UInt8](repeating: 0xFF, count: 11))
        // Ten bytes hold 64 bits only when the last is 0 or 1.
        expectError(.varintOverflow, offset: 1, [1] + [UInt8](repeating: 0x80, count: 9) + [2])
        expectError(.lengthPastEnd, offset: 1, [1] + [UInt8](repeating: 0x80, count: 9) + [1])
    }

    @Test func overlongVarintIsNonCanonical() {
        expectError(.nonCanonical, offset: 1, [1, 0x81, 0x00, 0x72])
    }

    @Test func lengthPastTheEndIsRefused() {
        expectError(.lengthPastEnd, offset: 1, [1, 5, 0x61, 0x62])
        expectError(.lengthPastEnd, offset: 2, [1, 0, 100] + [UInt8](repeating: 0x61, count: 99))
    }

    @Test func invalidUTF8IsRefused() {
        // A lone continuation byte, an overlong "/", a surrogate, and a truncated sequence.
        for invalid: [UInt8] in [[0x80], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82]] {
            expectError(.invalidUTF8, offset: 2, [1, UInt8(invalid.count)] + invalid + [0, 1] + zeroInstant)
        }
        var bytes = ReminderBinaryFixtures.oneShot.binaryEncoded()
        bytes[29 + 50] = 0xFF
        expectError(.invalidUTF8, offset: 29, bytes)
    }

    @Test func trailingBytesAreRefused() {
        let bytes = ReminderBinaryFixtures.oneShot.binaryEncoded()
        expectError(.trailingBytes, offset: bytes.count, bytes + [0])
    }

    @Test func unknownTagsAndFlagsAreRefused() {
        // flags: enabled + badgeChange, then badge tag 2.
        expectError(.unknownTag, offset: 6, header + [0x11, 2, 0] + zeroInstant)
        // flags: enabled + userInfo; one entry "k" with plist tag 7.
        expectError(.unknownTag, offset: 9, header + [0x21, 1, 1, 0x6B, 7] + zeroInstant)
        // flags: misfire (bit 17), tag 3.
        expectError(.unknownTag, offset: 16, header + [0x81, 0x80, 0x08] + zeroInstant + [3])
        // flags bit 40 is not defined in version 1 (bits 33 to 39 are the later content fields).
        expectError(.unknownFlags, offset: 5, header + [0x81, 0x80, 0x80, 0x80, 0x80, 0x20] + zeroInstant)
    }

    @Test func nonCanonicalFormsAreRefused() {
        // userInfo keys out of order ("b" before "a"), and repeated.
        expectError(.nonCanonical, offset: 10, header + [0x21, 2, 1, 0x62, 3, 1, 0x61, 3] + zeroInstant)
        expectError(.nonCanonical, offset: 10, header + [0x21, 2, 1, 0x61, 3, 1, 0x61, 3] + zeroInstant)
        // "e\u{301}" then "\u{E9}": ascending bytes, but one key as a String.
        expectError(
            .nonCanonical, offset: 12, header + [0x21, 2, 3, 0x65, 0xCC, 0x81, 3, 2, 0xC3, 0xA9, 3] + zeroInstant)
        // recurrenceDates marked present (bit 13) with a count of 0.
        expectError(.nonCanonical, offset: 15, header + [0x81, 0x40] + zeroInstant + [0])
        // A rule (bit 12) whose WKST part is written as Monday, the default.
        expectError(.nonCanonical, offset: 19, header + [0x81, 0x20] + zeroInstant + [2, 2, 0x80, 0x10, 1])
    }

    @Test func userInfoNestedSixtyFourDeepDecodesAndSixtyFiveThrows() throws {
        func reminder(depth: Int) -> Reminder {
            var value = PropertyListValue.integer(1)
            for _ in 0..<(depth - 2) { value = .dictionary(["k": value]) }
            return Reminder(
                id: "", recipient: "", content: Content(userInfo: ["k": value]),
                trigger: Trigger(start: .instant(Date(timeIntervalSinceReferenceDate: 0))))
        }
        let deepest = reminder(depth: Reminder.maximumBinaryUserInfoDepth)
        #expect(try Reminder(binary: deepest.binaryEncoded()) == deepest)
        let tooDeep = reminder(depth: Reminder.maximumBinaryUserInfoDepth + 1).binaryEncoded()
        // 4 header bytes, 3 for the top dictionary's count and key, 4 for each of levels
        // 2…64 (tag, count, key): the integer at level 65 starts at 259.
        #expect(tooDeep[259] == 1)
        expectError(.tooDeep, offset: 259, tooDeep)
    }

    @Test func errorsDescribeThemselvesAndCompareByReason() {
        let error = BinaryDecodingError(.truncated, offset: 7)
        #expect(error.description == "binary: truncated at offset 7")
        #expect(error == BinaryDecodingError(.truncated, offset: 9))
        #expect(error != BinaryDecodingError(.trailingBytes, offset: 7))
    }

    private func decodingError(_ bytes: ArraySlice<UInt8>) -> BinaryDecodingError? {
        do {
            _ = try Reminder(binary: bytes)
            return nil
        } catch {
            return error
        }
    }

    private func expectError(
        _ reason: BinaryDecodingError.Reason, offset: Int, _ bytes: [UInt8],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = decodingError(bytes[...])
        #expect(error?.reason == reason, "\(bytes)", sourceLocation: sourceLocation)
        #expect(error?.offset == offset, "\(String(describing: error))", sourceLocation: sourceLocation)
    }
}
