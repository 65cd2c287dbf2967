import ChimeCommandLine
import Testing

/// The bulk progress bar counts reminders settled, not bytes read (issue 42).
@Suite struct BulkShareTests {
    @Test func shareIsSettledOverTheTotalEstimatedFromWhatWasRead() {
        // 4,000 read in a quarter of the file: about 16,000 in all; 2,000 answered.
        #expect(bulkSettledShare(settled: 2_000, read: 4_000, readFraction: 0.25) == 0.125)
        // The whole file read (8,000 items) and 6,000 answered: 75 %, not the 100 % of bytes read.
        #expect(bulkSettledShare(settled: 6_000, read: 8_000, readFraction: 1) == 0.75)
        #expect(bulkSettledShare(settled: 8_000, read: 8_000, readFraction: 1) == 1)
    }

    @Test func noShareWithoutAnEstimate() {
        #expect(bulkSettledShare(settled: 10, read: 10, readFraction: nil) == nil)
        #expect(bulkSettledShare(settled: 0, read: 0, readFraction: 0.5) == nil)
        #expect(bulkSettledShare(settled: 0, read: 3, readFraction: 0) == nil)
        #expect(bulkSettledShare(settled: 3, read: 3, readFraction: .nan) == nil)
    }
}
