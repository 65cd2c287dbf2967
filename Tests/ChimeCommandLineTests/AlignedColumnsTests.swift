import ChimeCommandLine
import Testing

/// Issue 42: `ctl map` ran a long SLOTS cell into CONTROL.
@Suite struct AlignedColumnsTests {
    @Test func longCellsWidenTheirColumnInsteadOfRunningIntoTheNext() {
        let lines = alignedColumns([
            ["SHARD", "SLOTS", "CONTROL", "EVENTS"],
            ["0", "0-1364,2730-4095,5000", "tcp://127.0.0.1:7700", "tcp://127.0.0.1:7703"],
            ["1", "1365-2729", "tcp://127.0.0.1:7710", "tcp://127.0.0.1:7713"],
        ])
        #expect(lines == [
            "SHARD  SLOTS                  CONTROL               EVENTS",
            "0      0-1364,2730-4095,5000  tcp://127.0.0.1:7700  tcp://127.0.0.1:7703",
            "1      1365-2729              tcp://127.0.0.1:7710  tcp://127.0.0.1:7713",
        ])
    }

    @Test func emptyAndRaggedRowsStayTotal() {
        #expect(alignedColumns([]) == [])
        #expect(alignedColumns([["a", "bb"], ["ccc"], []]) == ["a    bb", "ccc", ""])
    }
}
