import ChimeCommandLine
import Testing

@Suite struct StatusLinesTests {
    @Test func stalledLineNamesTheDueFiringsAndTheOldestWait() {
        #expect(StatusLines.stalled(due: 3, oldestAgeSeconds: 42) == "STALLED: 3 firings due, no live worker (the oldest waiting 42s)")
        #expect(StatusLines.stalled(due: 1, oldestAgeSeconds: 3_700) == "STALLED: 1 firing due, no live worker (the oldest waiting 1h 1m)")
        #expect(StatusLines.stalled(due: 2, oldestAgeSeconds: nil) == "STALLED: 2 firings due, no live worker")
    }

    @Test func noStalledLineWithoutDueFirings() {
        #expect(StatusLines.stalled(due: nil, oldestAgeSeconds: nil) == nil)
        #expect(StatusLines.stalled(due: 0, oldestAgeSeconds: 5) == nil)
    }
}
