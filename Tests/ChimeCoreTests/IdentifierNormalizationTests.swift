import ChimeCore
import Foundation
import Testing

/// Ids must be in Unicode NFC: Swift's `==` treats an NFD twin as the same string, while slots
/// and stripes hash the UTF-8 bytes, so both forms stored would be one recipient in a dictionary
/// and two on the wire (issue 37 item 6: after a slot move `status` counted 2, `list` showed 1).
@Suite struct IdentifierNormalizationTests {
    static let composed = "zo\u{00E9}"  // "zoé", é as one scalar (NFC)
    static let decomposed = "zoe\u{0301}"  // e + combining acute (NFD)

    @Test func theTwoFormsAreEqualStringsWithDifferentBytes() {
        #expect(Self.composed == Self.decomposed)
        #expect(Array(Self.composed.utf8) == [0x7A, 0x6F, 0xC3, 0xA9])
        #expect(Array(Self.decomposed.utf8) == [0x7A, 0x6F, 0x65, 0xCC, 0x81])
    }

    @Test func nfcIdsAreAcceptedAndNfdIdsRefusedWithATypedError() throws {
        try RecipientID(Self.composed).validate()
        try ReminderID(Self.composed).validate()
        try RecipientID("alice").validate()
        for (field, check) in [
            ("recipient", { try RecipientID(Self.decomposed).validate() }),
            ("id", { try ReminderID(Self.decomposed).validate() }),
        ] as [(String, () throws -> Void)] {
            do {
                try check()
                Issue.record("\(field): an NFD id was accepted")
            } catch let error as ValidationError {
                #expect(error.code == .invalidArgument)
                #expect(error.field == field)
                #expect("\(error)".contains("NFC"))
            }
        }
    }

    @Test func hangulAndOtherScriptsInNfcPass() throws {
        try RecipientID("\u{D55C}\u{AE00}").validate()  // 한글, precomposed syllables
        try RecipientID("\u{6E2C}\u{8A66}-\u{0928}\u{092E}").validate()
        do {
            try RecipientID("\u{1112}\u{1161}\u{11AB}").validate()  // 한 as conjoining jamo (NFD)
            Issue.record("decomposed Hangul was accepted")
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }
}
