import Foundation
import Testing

@testable import ChimeRuntime

/// `ParentWatch` reads its starter from the environment and `/proc/PID/stat` totally.
struct ParentWatchTests {
    @Test func readsStateAndStartTimeAfterTheLastParenthesis() throws {
        // A command name with a space and a parenthesis of its own (field 2).
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1000 200\n"
        let stat = try #require(ParentWatch.Stat(parsing: line))
        #expect(stat == ParentWatch.Stat(parsing: "1 (x) S 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 987654"))
        #expect(stat.state == "S")
        #expect(stat.startTime == 987_654)
        #expect(!stat.hasExited)
        #expect(ParentWatch.Stat(parsing: "7 (x) Z 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 5")?.hasExited == true)
        #expect(ParentWatch.Stat(parsing: "7 (x) X 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 5")?.hasExited == true)
    }

    @Test(arguments: [
        "", "4242", "4242 (name", "4242 (x) S", "4242 (x) S 1 2 3", "4242 (x) SS 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 5",
        "4242 (x) S 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 -5", "4242 (x) S 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 99999999999999999999999",
        "\u{0}\u{FF})", ")))))",
    ])
    func refusesWhatIsNotAStatLine(_ text: String) {
        #expect(ParentWatch.Stat(parsing: text) == nil)
    }

    @Test func readsThisProcessAndItsParent() throws {
        let mine = try #require(ParentWatch.Stat.read(pid: getpid()))
        #expect(!mine.hasExited && mine.startTime > 0)
        #expect(ParentWatch.Stat.read(pid: getppid()) != nil)
        #expect(ParentWatch.Stat.read(pid: Int32.max) == nil)
    }

    @Test func theStarterComesOnlyFromADecimalPidAboveOne() {
        let key = ParentWatch.environmentKey
        #expect(ParentWatch.parentPID(in: [key: "4242"]) == 4242)
        for text in ["", "1", "0", "-5", "42x", " 42", "99999999999", "0x10"] {
            #expect(ParentWatch.parentPID(in: [key: text]) == nil, "\(text)")
        }
        #expect(ParentWatch.parentPID(in: [:]) == nil)
    }

    @Test func theStarterIsGoneWhenMissingExitedOrReplaced() throws {
        let running = try #require(ParentWatch.Stat(parsing: "9 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 100"))
        let zombie = try #require(ParentWatch.Stat(parsing: "9 (x) Z 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 100"))
        let reused = try #require(ParentWatch.Stat(parsing: "9 (y) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 101"))
        #expect(!ParentWatch.isGone(initial: running, current: running))
        #expect(ParentWatch.isGone(initial: running, current: zombie))
        #expect(ParentWatch.isGone(initial: running, current: reused))
        #expect(ParentWatch.isGone(initial: running, current: nil))
        #expect(ParentWatch.isGone(initial: nil, current: running))
    }
}
