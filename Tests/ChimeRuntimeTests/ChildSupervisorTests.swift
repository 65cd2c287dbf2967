import ChimeRuntime
import Foundation
import Testing

@Suite struct ChildSupervisorTests {
    static func shell(_ script: String) -> ChildSupervisor.Launch {
        .init(executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", script], output: .discard)
    }

    @Test func stopEndsAChildOnSIGTERMWithoutKill() throws {
        let child = ChildSupervisor(name: "sleeper", launch: Self.shell("exec sleep 30"))
        try child.start()
        let exit = try #require(child.stop(grace: 5))
        #expect(exit == ChildSupervisor.Exit(status: SIGTERM, isSignal: true, neededKill: false))
        #expect(!child.isRunning)
    }

    /// Starts `script` after which the shell creates a file, and waits (5 s at most) for it,
    /// so signals sent afterwards meet the script's traps.
    static func startReady(_ script: String, name: String) throws -> ChildSupervisor {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("child-ready-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: marker) }
        let child = ChildSupervisor(name: name, launch: shell("\(script); : > '\(marker.path)'; while :; do sleep 0.05; done"))
        try child.start()
        let deadline = Date().addingTimeInterval(5)
        while !FileManager.default.fileExists(atPath: marker.path) && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        return child
    }

    @Test func stopKillsAChildThatIgnoresSIGTERMAndSaysSo() throws {
        // `trap '' TERM`: SIGTERM is ignored, by the shell and the `sleep`s it starts.
        let child = try Self.startReady("trap '' TERM", name: "stubborn")
        let started = ContinuousClock.now
        let exit = try #require(child.stop(grace: 0.3))
        #expect(exit == ChildSupervisor.Exit(status: SIGKILL, isSignal: true, neededKill: true))
        #expect(ContinuousClock.now - started >= .milliseconds(300))
    }

    @Test func killsAPausedChildThatHandlesSIGTERM() throws {
        let child = try Self.startReady("trap 'exit 0' TERM", name: "paused")
        child.signal(SIGSTOP)
        // A stopped process keeps a handled SIGTERM pending: only SIGKILL ends it.
        let exit = try #require(child.stop(grace: 0.2))
        #expect(exit == ChildSupervisor.Exit(status: SIGKILL, isSignal: true, neededKill: true))
    }

    @Test func restartsAnExitedChildAfterItsBackoffDoublingEachTime() throws {
        let child = ChildSupervisor(
            name: "quitter", launch: Self.shell("exit 3"), backoff: RestartBackoff(initial: 0.05, maximum: 0.1, resetAfter: 60))
        try child.start()
        var pauses: [Duration] = []
        for _ in 0..<3 {
            let exit = try #require(child.waitForExit(timeout: 5))
            #expect(exit == ChildSupervisor.Exit(status: 3, isSignal: false))
            let delay = try #require(child.restartDelay)
            pauses.append(delay)
            #expect(try child.restartIfDue() == false, "not before the pause")
            try expectRestart(child, within: 2)
        }
        #expect(child.starts == 4)
        // 50 ms, 100 ms, then capped at 100 ms (measured just after the exit was noticed).
        #expect(pauses[0] <= .milliseconds(50) && pauses[0] > .milliseconds(30))
        #expect(pauses[1] <= .milliseconds(100) && pauses[1] > .milliseconds(80))
        #expect(pauses[2] <= .milliseconds(100) && pauses[2] > .milliseconds(80))
        child.stop(grace: 1)
    }

    @Test func backoffDoublesToItsMaximum() {
        let backoff = RestartBackoff(initial: 0.2, maximum: 5, resetAfter: 10)
        #expect((0..<7).map { backoff.delay(afterRestarts: $0) } == [0.2, 0.4, 0.8, 1.6, 3.2, 5, 5])
        #expect(backoff.delay(afterRestarts: 1_000) == 5)
    }

    private func expectRestart(_ child: ChildSupervisor, within seconds: Double) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try child.restartIfDue() { return }
            Thread.sleep(forTimeInterval: 0.005)
        }
        Issue.record("no restart within \(seconds) s")
    }
}
