import Foundation
import Testing

@testable import ChimeCoordinator

/// The bound on all control connections' unread replies, and all worker connections' unread
/// batches, together (issue 37 item 1): a connection with bytes unsent may hold what it was
/// handed since it last caught up; past the total the ones behind longest are cut. The
/// dispatch book also holds one connection to its own bound.
@Suite struct ConnectionBacklogTests {
    /// Descriptors as a table: each has an identity and an unsent count the test sets.
    final class FakeProbe: ConnectionProbe {
        var sockets: [Int32: ConnectionSocket.Identity] = [:]
        var notSent: [Int32: UInt32] = [:]
        var cuts: [Int32] = []
        var measurements = 0

        /// A socket at `descriptor`; TCP (with an unsent count of 0) unless `unsent` is `nil`.
        func add(_ descriptor: Int32, inode: UInt64, unsent: UInt32? = 0) {
            sockets[descriptor] = .init(device: 1, inode: inode)
            notSent[descriptor] = unsent
        }

        func identity(of descriptor: Int32) -> ConnectionSocket.Identity? { sockets[descriptor] }
        func bytesNotSent(_ descriptor: Int32) -> UInt32? {
            measurements += 1
            return notSent[descriptor]
        }
        func cut(_ descriptor: Int32, ifStill identity: ConnectionSocket.Identity) -> Bool {
            guard sockets[descriptor] == identity else { return false }
            cuts.append(descriptor)
            return true
        }
    }

    static func routing(_ n: UInt8) -> [Data] { [Data([0, 0, 0, 0, n]), Data()] }
    static let overhead = ConnectionBacklog.messageOverheadBytes

    /// A book with `count` TCP connections, routing n on descriptor n, first seen at 0.
    static func book(
        _ probe: FakeProbe, count: Int, total: Int, perConnection: Int = Int.max, holdsToBound: Bool = false
    ) -> ConnectionBacklog {
        var backlog = ConnectionBacklog(
            totalBytes: total, perConnectionBytes: perConnection, holdsToBound: holdsToBound, sampleIntervalSeconds: 0.1)
        for n in 1...count {
            probe.add(Int32(n), inode: UInt64(n))
            backlog.onReceived(from: routing(UInt8(n)), descriptor: Int32(n), at: 0, probe: probe)
        }
        return backlog
    }

    @Test func aConnectionWithBytesUnsentMayHoldWhatItWasHandedSinceItCaughtUp() {
        let probe = FakeProbe()
        var backlog = Self.book(probe, count: 1, total: 1 << 30)
        backlog.onSent(to: Self.routing(1), bytes: 40_000)
        // Caught up at the first sample: nothing counted, the count starts after it.
        #expect(backlog.sample(at: 1, probe: probe).isEmpty)
        #expect(backlog.estimatedTotal == 0)
        #expect(backlog.active.isEmpty)
        backlog.onSent(to: Self.routing(1), bytes: 30_000)
        backlog.onSent(to: Self.routing(1), bytes: 20_000)
        probe.notSent[1] = 4_096
        #expect(backlog.sample(at: 2, probe: probe).isEmpty)
        #expect(backlog.estimatedTotal == 50_000 + 2 * Self.overhead)
        // Still behind: what came since adds up; caught up again: cleared.
        backlog.onSent(to: Self.routing(1), bytes: 10_000)
        #expect(backlog.sample(at: 3, probe: probe).isEmpty)
        #expect(backlog.estimatedTotal == 60_000 + 3 * Self.overhead)
        probe.notSent[1] = 0
        #expect(backlog.sample(at: 4, probe: probe).isEmpty)
        #expect(backlog.estimatedTotal == 0)
        #expect(backlog.connections[Self.routing(1)]?.caughtUp == 100_000 + 4 * Self.overhead)
    }

    @Test func oneConnectionsEstimateStopsAtItsOwnBound() {
        let probe = FakeProbe()
        var backlog = Self.book(probe, count: 1, total: 1 << 30, perConnection: 10_000)
        probe.notSent[1] = 1
        backlog.onSent(to: Self.routing(1), bytes: 50_000)
        _ = backlog.sample(at: 1, probe: probe)
        #expect(backlog.estimatedTotal == 10_000)
    }

    @Test func aWorkerConnectionBehindItsBoundGetsNoBatchUntilTheKernelSentEverything() {
        let probe = FakeProbe()
        var backlog = Self.book(probe, count: 2, total: 1 << 30, perConnection: 10_000, holdsToBound: true)
        let worker = Self.routing(1)
        // Below the bound: no system call.
        let belowBound = backlog.mayHandOver(to: worker, at: 1, probe: probe)
        #expect(belowBound)
        #expect(probe.measurements == 2)  // the two connections' first sight
        backlog.onSent(to: worker, bytes: 6_000)
        let stillBelow = backlog.mayHandOver(to: worker, at: 1, probe: probe)
        #expect(stillBelow)
        #expect(probe.measurements == 2)
        // One batch may pass the bound; the next asks the kernel.
        backlog.onSent(to: worker, bytes: 6_000)
        probe.notSent[1] = 3_000
        let pastBound = backlog.mayHandOver(to: worker, at: 2, probe: probe)
        #expect(!pastBound)
        let stillBehind = backlog.mayHandOver(to: worker, at: 3, probe: probe)
        #expect(!stillBehind)
        #expect(backlog.handOversRefused == 2)
        #expect(probe.measurements == 4)
        // The estimate is not capped at the bound: the last batch passed it.
        _ = backlog.sample(at: 3, probe: probe)
        #expect(backlog.estimatedTotal == 12_000 + 2 * Self.overhead)
        // The other connection is not held, and neither is one not tracked (ipc, unknown).
        let other = backlog.mayHandOver(to: Self.routing(2), at: 3, probe: probe)
        let untracked = backlog.mayHandOver(to: Self.routing(9), at: 3, probe: probe)
        #expect(other && untracked)
        // Caught up: it gets batches again, counted from here.
        probe.notSent[1] = 0
        let caughtUp = backlog.mayHandOver(to: worker, at: 4, probe: probe)
        #expect(caughtUp)
        #expect(backlog.connections[worker]?.caughtUp == 12_000 + 2 * Self.overhead)
        #expect(backlog.connections[worker]?.caughtUpAt == 4)
        #expect(!backlog.active.contains(worker))
        #expect(backlog.handOversRefused == 2)
    }

    @Test func aNewConnectionUnderTheSameRoutingIDStartsAtNothing() {
        let probe = FakeProbe()
        var backlog = Self.book(probe, count: 1, total: 1 << 30, perConnection: 10_000, holdsToBound: true)
        backlog.onSent(to: Self.routing(1), bytes: 20_000)
        probe.notSent[1] = 1
        let held = backlog.mayHandOver(to: Self.routing(1), at: 1, probe: probe)
        #expect(!held)
        // The worker reconnects (ZMQ_ROUTER_HANDOVER gives its routing id to the new connection).
        probe.add(7, inode: 70)
        backlog.onReceived(from: Self.routing(1), descriptor: 7, at: 2, probe: probe)
        #expect(backlog.connections[Self.routing(1)]?.descriptor == 7)
        let reconnected = backlog.mayHandOver(to: Self.routing(1), at: 2, probe: probe)
        #expect(reconnected)
    }

    @Test func pastTheTotalTheConnectionsBehindLongestAreCutNotTheLargest() {
        let probe = FakeProbe()
        var backlog = Self.book(probe, count: 3, total: 100_000)
        // 1 and 2 caught up at 1; 1 stops reading after, 2 reads on and catches up again at
        // 1.5; 3 has not caught up since it was first seen at 0.
        backlog.onSent(to: Self.routing(1), bytes: 1_000)
        backlog.onSent(to: Self.routing(2), bytes: 1_000)
        _ = backlog.sample(at: 1, probe: probe)
        probe.notSent[1] = 100
        backlog.onSent(to: Self.routing(1), bytes: 40_000)
        backlog.onSent(to: Self.routing(2), bytes: 1_000)
        #expect(backlog.sample(at: 1.5, probe: probe).isEmpty)
        #expect(backlog.estimatedTotal == 40_000 + Self.overhead)
        probe.notSent[2] = 100
        probe.notSent[3] = 100
        backlog.onSent(to: Self.routing(3), bytes: 30_000)
        // 2 is a reader in the middle of a large page: found behind for the first time, and largest.
        backlog.onSent(to: Self.routing(2), bytes: 60_000)
        let cut = backlog.sample(at: 2, probe: probe)
        // 130,048 in all: 3 (behind since 0) goes first, then 1 (since 1): 60,016 left.
        #expect(cut.map(\.routing) == [Self.routing(3), Self.routing(1)])
        #expect(cut.map(\.bytes) == [30_000 + Self.overhead, 40_000 + Self.overhead])
        #expect(probe.cuts == [3, 1])
        #expect(backlog.connectionsCut == 2)
        #expect(backlog.estimatedTotal == 60_000 + Self.overhead)
        #expect(backlog.connections[Self.routing(2)] != nil)
        #expect(backlog.connections.count == 1)
    }

    @Test func creditFromBytesThatAreNoReplyCannotHideUnreadPages() {
        // The attack the acknowledged count fell to: a peer reads megabytes of PONGs, then
        // asks for pages it never reads. Only unsent bytes count now, and they stay.
        let probe = FakeProbe()
        var backlog = Self.book(probe, count: 1, total: 16 << 20, perConnection: 32 << 20)
        backlog.onSent(to: Self.routing(1), bytes: 100)
        _ = backlog.sample(at: 1, probe: probe)
        probe.notSent[1] = 65_536
        for _ in 0..<259 { backlog.onSent(to: Self.routing(1), bytes: 65_536) }
        let cut = backlog.sample(at: 2, probe: probe)
        #expect(cut.map(\.bytes) == [259 * (65_536 + Self.overhead)])
        #expect(probe.cuts == [1])
    }

    @Test func aClosedDescriptorIsForgottenNotCutAndACutChecksTheSocket() {
        let probe = FakeProbe()
        var backlog = Self.book(probe, count: 2, total: 1_000)
        backlog.onSent(to: Self.routing(1), bytes: 5_000)
        backlog.onSent(to: Self.routing(2), bytes: 5_000)
        // 1 is closed; 2 is now another socket under the same number.
        probe.notSent[1] = nil
        probe.notSent[2] = 10
        probe.sockets[2] = .init(device: 1, inode: 99)
        #expect(backlog.sample(at: 1, probe: probe).isEmpty)
        #expect(probe.cuts.isEmpty)
        #expect(backlog.connections.isEmpty)
        #expect(backlog.connectionsCut == 0)
    }

    @Test func unixAndInprocConnectionsAreNotTracked() {
        let probe = FakeProbe()
        probe.add(9, inode: 90, unsent: nil)  // a Unix socket: no unsent count
        var backlog = ConnectionBacklog(totalBytes: 1_000)
        backlog.onReceived(from: Self.routing(1), descriptor: 9, at: 0, probe: probe)
        backlog.onReceived(from: Self.routing(2), descriptor: nil, at: 0, probe: probe)
        backlog.onSent(to: Self.routing(1), bytes: 50_000)
        backlog.onSent(to: Self.routing(2), bytes: 50_000)
        #expect(backlog.connections.isEmpty)
        #expect(!backlog.isSampleDue(at: 1))
    }

    @Test func aNewDescriptorForAKnownRoutingStartsAfreshAndTheSameCostsNoSystemCall() {
        let probe = FakeProbe()
        var backlog = Self.book(probe, count: 1, total: 1_000_000)
        backlog.onSent(to: Self.routing(1), bytes: 900)
        // The client chose its routing id and came back on another connection.
        probe.add(8, inode: 80)
        backlog.onReceived(from: Self.routing(1), descriptor: 8, at: 1, probe: probe)
        #expect(backlog.connections[Self.routing(1)] == .init(descriptor: 8, socket: .init(device: 1, inode: 80), caughtUpAt: 1, lastReceived: 1))
        #expect(backlog.active.isEmpty)
        let calls = probe.measurements
        backlog.onReceived(from: Self.routing(1), descriptor: 8, at: 2, probe: probe)
        #expect(probe.measurements == calls)
        #expect(backlog.connections[Self.routing(1)]?.lastReceived == 2)
    }

    @Test func samplesAreSpacedAndOnlyWhileRepliesAreOutstanding() {
        let probe = FakeProbe()
        var backlog = Self.book(probe, count: 1, total: 40_000)
        #expect(!backlog.isSampleDue(at: 1))
        backlog.onSent(to: Self.routing(1), bytes: 100)
        #expect(backlog.isSampleDue(at: 1))
        probe.notSent[1] = 5
        _ = backlog.sample(at: 1, probe: probe)
        #expect(!backlog.isSampleDue(at: 1.05))
        #expect(backlog.isSampleDue(at: 1.1))
        // A quarter of the bound handed over since: due at once.
        backlog.onSent(to: Self.routing(1), bytes: 10_000)
        #expect(backlog.isSampleDue(at: 1.05))
    }

    @Test func idleConnectionsAreForgottenAndTheTableStaysBounded() {
        let probe = FakeProbe()
        var backlog = ConnectionBacklog(totalBytes: 1 << 40, maxTracked: 16, forgetAfterSeconds: 60)
        for n in 0..<16 {
            probe.add(Int32(n), inode: UInt64(n))
            backlog.onReceived(from: Self.routing(UInt8(n)), descriptor: Int32(n), at: Double(n), probe: probe)
        }
        // Connection 0 has replies outstanding; at the bound the least recent of the others go first.
        backlog.onSent(to: Self.routing(0), bytes: 100)
        probe.add(16, inode: 16)
        backlog.onReceived(from: Self.routing(16), descriptor: 16, at: 16, probe: probe)
        #expect(backlog.connections.count == 15)
        #expect(backlog.connections[Self.routing(0)] != nil)
        #expect(backlog.connections[Self.routing(1)] == nil && backlog.connections[Self.routing(2)] == nil)
        #expect(backlog.connections[Self.routing(16)] != nil)
        // A minute later only the one with replies outstanding is kept.
        backlog.forgetIdle(at: 16 + 60)
        #expect(Array(backlog.connections.keys) == [Self.routing(0)])
    }
}
