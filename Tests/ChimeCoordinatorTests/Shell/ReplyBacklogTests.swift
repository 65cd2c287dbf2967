import Foundation
import Testing

@testable import ChimeCoordinator

/// The bound on all control connections' unread replies together (issue 37 item 1): a
/// connection with bytes unsent may hold what it was handed since it last caught up; past the
/// total the ones behind longest are cut.
@Suite struct ReplyBacklogTests {
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
    static let overhead = ReplyBacklog.replyOverheadBytes

    /// A book with `count` TCP connections, routing n on descriptor n, first seen at 0.
    static func book(_ probe: FakeProbe, count: Int, total: Int, perConnection: Int = Int.max) -> ReplyBacklog {
        var backlog = ReplyBacklog(totalBytes: total, perConnectionBytes: perConnection, sampleIntervalSeconds: 0.1)
        for n in 1...count {
            probe.add(Int32(n), inode: UInt64(n))
            backlog.onRequest(from: routing(UInt8(n)), descriptor: Int32(n), at: 0, probe: probe)
        }
        return backlog
    }

    @Test func aConnectionWithBytesUnsentMayHoldWhatItWasHandedSinceItCaughtUp() {
        let probe = FakeProbe()
        var backlog = Self.book(probe, count: 1, total: 1 << 30)
        backlog.onReplySent(to: Self.routing(1), bytes: 40_000)
        // Caught up at the first sample: nothing counted, the count starts after it.
        #expect(backlog.sample(at: 1, probe: probe).isEmpty)
        #expect(backlog.estimatedTotal == 0)
        #expect(backlog.active.isEmpty)
        backlog.onReplySent(to: Self.routing(1), bytes: 30_000)
        backlog.onReplySent(to: Self.routing(1), bytes: 20_000)
        probe.notSent[1] = 4_096
        #expect(backlog.sample(at: 2, probe: probe).isEmpty)
        #expect(backlog.estimatedTotal == 50_000 + 2 * Self.overhead)
        // Still behind: what came since adds up; caught up again: cleared.
        backlog.onReplySent(to: Self.routing(1), bytes: 10_000)
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
        backlog.onReplySent(to: Self.routing(1), bytes: 50_000)
        _ = backlog.sample(at: 1, probe: probe)
        #expect(backlog.estimatedTotal == 10_000)
    }

    @Test func pastTheTotalTheConnectionsBehindLongestAreCutNotTheLargest() {
        let probe = FakeProbe()
        var backlog = Self.book(probe, count: 3, total: 100_000)
        // 1 and 2 caught up at 1; 1 stops reading after, 2 reads on and catches up again at
        // 1.5; 3 has not caught up since it was first seen at 0.
        backlog.onReplySent(to: Self.routing(1), bytes: 1_000)
        backlog.onReplySent(to: Self.routing(2), bytes: 1_000)
        _ = backlog.sample(at: 1, probe: probe)
        probe.notSent[1] = 100
        backlog.onReplySent(to: Self.routing(1), bytes: 40_000)
        backlog.onReplySent(to: Self.routing(2), bytes: 1_000)
        #expect(backlog.sample(at: 1.5, probe: probe).isEmpty)
        #expect(backlog.estimatedTotal == 40_000 + Self.overhead)
        probe.notSent[2] = 100
        probe.notSent[3] = 100
        backlog.onReplySent(to: Self.routing(3), bytes: 30_000)
        // 2 is a reader in the middle of a large page: found behind for the first time, and largest.
        backlog.onReplySent(to: Self.routing(2), bytes: 60_000)
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
        backlog.onReplySent(to: Self.routing(1), bytes: 100)
        _ = backlog.sample(at: 1, probe: probe)
        probe.notSent[1] = 65_536
        for _ in 0..<259 { backlog.onReplySent(to: Self.routing(1), bytes: 65_536) }
        let cut = backlog.sample(at: 2, probe: probe)
        #expect(cut.map(\.bytes) == [259 * (65_536 + Self.overhead)])
        #expect(probe.cuts == [1])
    }

    @Test func aClosedDescriptorIsForgottenNotCutAndACutChecksTheSocket() {
        let probe = FakeProbe()
        var backlog = Self.book(probe, count: 2, total: 1_000)
        backlog.onReplySent(to: Self.routing(1), bytes: 5_000)
        backlog.onReplySent(to: Self.routing(2), bytes: 5_000)
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
        var backlog = ReplyBacklog(totalBytes: 1_000)
        backlog.onRequest(from: Self.routing(1), descriptor: 9, at: 0, probe: probe)
        backlog.onRequest(from: Self.routing(2), descriptor: nil, at: 0, probe: probe)
        backlog.onReplySent(to: Self.routing(1), bytes: 50_000)
        backlog.onReplySent(to: Self.routing(2), bytes: 50_000)
        #expect(backlog.connections.isEmpty)
        #expect(!backlog.isSampleDue(at: 1))
    }

    @Test func aNewDescriptorForAKnownRoutingStartsAfreshAndTheSameCostsNoSystemCall() {
        let probe = FakeProbe()
        var backlog = Self.book(probe, count: 1, total: 1_000_000)
        backlog.onReplySent(to: Self.routing(1), bytes: 900)
        // The client chose its routing id and came back on another connection.
        probe.add(8, inode: 80)
        backlog.onRequest(from: Self.routing(1), descriptor: 8, at: 1, probe: probe)
        #expect(backlog.connections[Self.routing(1)] == .init(descriptor: 8, socket: .init(device: 1, inode: 80), caughtUpAt: 1, lastRequest: 1))
        #expect(backlog.active.isEmpty)
        let calls = probe.measurements
        backlog.onRequest(from: Self.routing(1), descriptor: 8, at: 2, probe: probe)
        #expect(probe.measurements == calls)
        #expect(backlog.connections[Self.routing(1)]?.lastRequest == 2)
    }

    @Test func samplesAreSpacedAndOnlyWhileRepliesAreOutstanding() {
        let probe = FakeProbe()
        var backlog = Self.book(probe, count: 1, total: 40_000)
        #expect(!backlog.isSampleDue(at: 1))
        backlog.onReplySent(to: Self.routing(1), bytes: 100)
        #expect(backlog.isSampleDue(at: 1))
        probe.notSent[1] = 5
        _ = backlog.sample(at: 1, probe: probe)
        #expect(!backlog.isSampleDue(at: 1.05))
        #expect(backlog.isSampleDue(at: 1.1))
        // A quarter of the bound handed over since: due at once.
        backlog.onReplySent(to: Self.routing(1), bytes: 10_000)
        #expect(backlog.isSampleDue(at: 1.05))
    }

    @Test func idleConnectionsAreForgottenAndTheTableStaysBounded() {
        let probe = FakeProbe()
        var backlog = ReplyBacklog(totalBytes: 1 << 40, maxTracked: 16, forgetAfterSeconds: 60)
        for n in 0..<16 {
            probe.add(Int32(n), inode: UInt64(n))
            backlog.onRequest(from: Self.routing(UInt8(n)), descriptor: Int32(n), at: Double(n), probe: probe)
        }
        // Connection 0 has replies outstanding; at the bound the least recent of the others go first.
        backlog.onReplySent(to: Self.routing(0), bytes: 100)
        probe.add(16, inode: 16)
        backlog.onRequest(from: Self.routing(16), descriptor: 16, at: 16, probe: probe)
        #expect(backlog.connections.count == 15)
        #expect(backlog.connections[Self.routing(0)] != nil)
        #expect(backlog.connections[Self.routing(1)] == nil && backlog.connections[Self.routing(2)] == nil)
        #expect(backlog.connections[Self.routing(16)] != nil)
        // A minute later only the one with replies outstanding is kept.
        backlog.forgetIdle(at: 16 + 60)
        #expect(Array(backlog.connections.keys) == [Self.routing(0)])
    }
}
