import ChimeCore
import Testing

/// The striped dictionary behind the reminder table and the schedule's index: a dictionary in
/// every observable way, whatever the stripe count, and a copy stays as it was.
@Suite struct StripedDictionaryTests {
    @Test(arguments: [1, 7, 256])
    func behavesAsOneDictionary(stripeCount: Int) {
        var striped = StripedDictionary<ReminderID, Int>(stripeCount: stripeCount) { $0.stripeHash }
        var plain: [ReminderID: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        for step in 0..<5_000 {
            let key = ReminderID("r\(Int.random(in: 0..<700, using: &generator))")
            switch step % 4 {
            case 0, 1:
                #expect(striped.updateValue(step, forKey: key) == plain.updateValue(step, forKey: key))
            case 2:
                #expect(striped.removeValue(forKey: key) == plain.removeValue(forKey: key))
            default:
                striped[key] = nil
                plain[key] = nil
            }
            #expect(striped.count == plain.count)
        }
        #expect(Dictionary(uniqueKeysWithValues: striped.map { ($0.key, $0.value) }) == plain)
        #expect(Set(striped.keys) == Set(plain.keys))
        #expect(striped.values.sorted() == plain.values.sorted())
        for (key, value) in plain {
            #expect(striped[key] == value)
            #expect(striped[key, inStripe: striped.stripe(of: key)] == value)
        }
        #expect(striped.isEmpty == plain.isEmpty)
    }

    @Test func aCopyKeepsItsValuesWhileTheOriginalChanges() {
        var original = StripedDictionary<ReminderID, Int>(stripeCount: 256) { $0.stripeHash }
        for index in 0..<1_000 { original[ReminderID("r\(index)")] = index }
        let copy = original
        for index in 0..<500 { original[ReminderID("r\(index)")] = nil }
        original[ReminderID("r999")] = -1
        #expect(copy.count == 1_000)
        #expect(original.count == 500)
        #expect(copy[ReminderID("r0")] == 0)
        #expect(copy[ReminderID("r999")] == 999)
        #expect(original[ReminderID("r999")] == -1)
        #expect(copy != original)
    }

    @Test func equalityIgnoresTheStripeCount() {
        var one = StripedDictionary<ReminderID, Int>()
        var many = StripedDictionary<ReminderID, Int>(stripeCount: 64)
        for index in 0..<300 {
            one[ReminderID("r\(index)")] = index
            many[ReminderID("r\(index)")] = index
        }
        #expect(one == many)
        many[ReminderID("r5")] = 6
        #expect(one != many)
    }

    /// FNV-1a of the last 16 bytes and the length, folded: fixed, so stripes do not depend on
    /// the process's hash seed (value computed independently in Python).
    @Test func theStripeHashOfAnIdIsFixed() {
        #expect(ReminderID("bulk-0000123").stripeHash == 0x4a32_5600_8623_36a2)
        #expect(ReminderID("bulk-0000123").stripeHash % 256 == 162)
        #expect(ReminderID("").stripeHash != ReminderID("a").stripeHash)
        // Ids of one prefix spread over the stripes.
        let stripes = Set((0..<10_000).map { ReminderID("reminder-\($0)").stripeHash % 256 })
        #expect(stripes.count == 256)
    }

    /// Ids that share a long suffix (a mail domain, a fixed tail) and differ only at the
    /// front still spread: the first 16 bytes count too, so copy-on-write after a snapshot
    /// copies one stripe of them, not all of them.
    @Test func idsWithACommonSuffixSpreadOverTheStripes() {
        let mailLike = Set((0..<10_000).map { ReminderID("\($0)@calendar.example.com").stripeHash % 256 })
        #expect(mailLike.count == 256)
        let fixedTail = Set((0..<10_000).map { ReminderID("u\($0)-daily-standup-reminder").stripeHash % 256 })
        #expect(fixedTail.count == 256)
        // Up to 16 bytes the hash is unchanged: the whole id, then the length.
        #expect(ReminderID("bulk-0000123").stripeHash == 0x4a32_5600_8623_36a2)
    }
}
