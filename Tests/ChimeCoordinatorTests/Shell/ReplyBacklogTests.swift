import Foundation
import Testing

@testable import ChimeCoordinator

/// The bound on all control connections' unread replies together (issue 37 item 1): measured
/// from what was handed over and what the peer acknowledged, the largest cut first.
@Suite struct ReplyBacklogTests {
    /// Descriptors as a table: each has an identity and an acknowledged count the test sets.
    final class FakeProbe: ConnectionProbe {
        var sockets: [Int32: ConnectionSocket.Identity] = [:]
        var acknowledged: [Int32: UInt64] = [:]
        var notSent: [Int32: UInt32] = [:]
        var cuts: [Int32] = []
        var measurements = 0

        func add(_ descriptor: Int32, inode: UInt64, acknowledged bytes: UInt64? = 100) {
            sockets[descriptor] = .init(device: 1, inode: inode)
            acknowledged[descriptor] = bytes
        }

        func identity(of descriptor: Int32) -> ConnectionSocket.Identity? { sockets[descriptor] }
        func bytesAcknowledged(_ descriptor: Int32) -> UInt64? {
            measurements += 1
            return acknowledged[descriptor]
        }
        func bytesNotSent(_ descriptor: Int32) -> UInt32? { notSent[descriptor] }
        func cut(_ descriptor: Int32, ifStill identity: ConnectionSocket.Identity) -> Bool {
            guard sockets[descriptor] == identity else { return false }
            cuts.append(descriptor)
            return true
        }
    }

    static func routing(_ n: UInt8) -> [Data] { [Data([0, 0, 0, 0, n]), Data()] }
    static let overhead = ReplyBacklog.replyOverheadBytes

    @Test func unreadBytesAreWhatWasHandedOverLessWhatThePeerAcknowledged() {
        let probe = FakeProbe()
        probe.add(7, inode: 70, acknowledged: 1_000)
        var backlog = ReplyBacklog(totalBytes: 100_000, measureIntervalSeconds: 0)
        backlog.onRequest(from: Self.routing(1), descriptor: 7, at: 0, probe: probe)
        for _ in 0..<3 { backlog.onReplySent(to: Self.routing(1), bytes: 40_000) }
        #expect(backlog.isMeasureDue(at: 1))
        // The peer took 50,000 bytes of the 120,048 handed over: 70,048 are unread, within the bound.
        probe.acknowledged[7] = 51_000
        #expect(backlog.measure(at: 1, probe: probe).isEmpty)
        #expect(backlog.measuredTotal == 3 * (40_000 + Self.overhead) - 50_000)
        #expect(!backlog.isMeasureDue(at: 2))
        #expect(probe.cuts.isEmpty)
    }

    @Test func pastTheTotalTheLargestAreCutUntilTheRestFit() {
        let probe = FakeProbe()
        var backlog = ReplyBacklog(totalBytes: 100_000, measureIntervalSeconds: 0)
        // Four connections hold 60,000, 50,000, 30,000 and 10,000 bytes (each + overhead).
        for (n, bytes) in [(1, 60_000), (2, 50_000), (3, 30_000), (4, 10_000)] {
            probe.add(Int32(n), inode: UInt64(n), acknowledged: 500)
            backlog.onRequest(from: Self.routing(UInt8(n)), descriptor: Int32(n), at: 0, probe: probe)
            backlog.onReplySent(to: Self.routing(UInt8(n)), bytes: bytes)
        }
        let cut = backlog.measure(at: 1, probe: probe)
        // 150,064 in all: cutting the largest leaves 90,048, within 100,000.
        #expect(cut.map(\.routing) == [Self.routing(1)])
        #expect(cut.map(\.bytes) == [60_000 + Self.overhead])
        #expect(probe.cuts == [1])
        #expect(backlog.connectionsCut == 1)
        #expect(backlog.measuredTotal == 90_000 + 3 * Self.overhead)
        #expect(backlog.connections[Self.routing(1)] == nil)
        #expect(backlog.connections.count == 3)
    }

    @Test func aPeerThatReadsEverythingStartsItsCountAfreshSoFramingDoesNotAddUp() {
        let probe = FakeProbe()
        probe.add(3, inode: 30, acknowledged: 200)
        var backlog = ReplyBacklog(totalBytes: 1_000, measureIntervalSeconds: 0)
        backlog.onRequest(from: Self.routing(1), descriptor: 3, at: 0, probe: probe)
        backlog.onReplySent(to: Self.routing(1), bytes: 2_000)
        // Acknowledged more than counted (ZMTP frame headers): nothing unread, the count restarts.
        probe.acknowledged[3] = 200 + 2_100
        #expect(backlog.measure(at: 1, probe: probe).isEmpty)
        #expect(backlog.measuredTotal == 0)
        #expect(backlog.connections[Self.routing(1)]?.acknowledgedBase == 2_300)
        #expect(backlog.connections[Self.routing(1)]?.handedOver == 0)
        // The next 1,500 bytes unread count from there, not less the earlier surplus.
        backlog.onReplySent(to: Self.routing(1), bytes: 1_500)
        let cut = backlog.measure(at: 2, probe: probe)
        #expect(cut.map(\.bytes) == [1_500 + Self.overhead])
        #expect(probe.cuts == [3])
    }

    @Test func aDescriptorClosedOrReusedIsForgottenNotCut() {
        let probe = FakeProbe()
        probe.add(5, inode: 50)
        probe.add(6, inode: 60)
        var backlog = ReplyBacklog(totalBytes: 1_000, measureIntervalSeconds: 0)
        backlog.onRequest(from: Self.routing(1), descriptor: 5, at: 0, probe: probe)
        backlog.onRequest(from: Self.routing(2), descriptor: 6, at: 0, probe: probe)
        backlog.onReplySent(to: Self.routing(1), bytes: 5_000)
        backlog.onReplySent(to: Self.routing(2), bytes: 5_000)
        // 5 now belongs to another socket, 6 is closed: neither is measured or touched.
        probe.sockets[5] = .init(device: 1, inode: 51)
        probe.sockets[6] = nil
        #expect(backlog.measure(at: 1, probe: probe).isEmpty)
        #expect(probe.cuts.isEmpty)
        #expect(backlog.connections.isEmpty)
        #expect(backlog.measuredTotal == 0)
    }

    @Test func unixAndInprocConnectionsAreNotCountedAgainstTheTotal() {
        let probe = FakeProbe()
        probe.add(9, inode: 90, acknowledged: nil)  // a Unix socket: no acknowledged count
        var backlog = ReplyBacklog(totalBytes: 1_000, measureIntervalSeconds: 0)
        backlog.onRequest(from: Self.routing(1), descriptor: 9, at: 0, probe: probe)
        backlog.onRequest(from: Self.routing(2), descriptor: nil, at: 0, probe: probe)
        backlog.onReplySent(to: Self.routing(1), bytes: 50_000)
        backlog.onReplySent(to: Self.routing(2), bytes: 50_000)
        #expect(!backlog.isMeasureDue(at: 1))
        #expect(backlog.connections.count == 1)
        #expect(backlog.connections[Self.routing(1)]?.acknowledgedBase == nil)
    }

    @Test func aNewDescriptorForAKnownRoutingStartsANewCount() {
        let probe = FakeProbe()
        probe.add(4, inode: 40, acknowledged: 10)
        var backlog = ReplyBacklog(totalBytes: 1_000_000, measureIntervalSeconds: 0)
        backlog.onRequest(from: Self.routing(1), descriptor: 4, at: 0, probe: probe)
        backlog.onReplySent(to: Self.routing(1), bytes: 900)
        // The client chose its routing id and came back on another connection.
        probe.add(8, inode: 80, acknowledged: 7)
        backlog.onRequest(from: Self.routing(1), descriptor: 8, at: 1, probe: probe)
        #expect(backlog.connections[Self.routing(1)] == .init(descriptor: 8, socket: .init(device: 1, inode: 80), acknowledgedBase: 7, lastRequest: 1))
        // The same descriptor again costs no system call.
        let calls = probe.measurements
        backlog.onRequest(from: Self.routing(1), descriptor: 8, at: 2, probe: probe)
        #expect(probe.measurements == calls)
        #expect(backlog.connections[Self.routing(1)]?.lastRequest == 2)
    }

    @Test func measurementsAreSpacedAndOnlyWhenTheTotalCouldBePassed() {
        let probe = FakeProbe()
        probe.add(2, inode: 20, acknowledged: 0)
        var backlog = ReplyBacklog(totalBytes: 10_000, measureIntervalSeconds: 0.01)
        backlog.onRequest(from: Self.routing(1), descriptor: 2, at: 0, probe: probe)
        backlog.onReplySent(to: Self.routing(1), bytes: 9_000)
        #expect(!backlog.isMeasureDue(at: 1))
        backlog.onReplySent(to: Self.routing(1), bytes: 9_000)
        #expect(backlog.isMeasureDue(at: 1))
        probe.acknowledged[2] = 10_000  // 8,032 unread
        #expect(backlog.measure(at: 1, probe: probe).isEmpty)
        #expect(backlog.measuredTotal == 8_032)
        // 2,016 more could pass the bound: measured again 10 ms later, not sooner...
        backlog.onReplySent(to: Self.routing(1), bytes: 2_000)
        #expect(!backlog.isMeasureDue(at: 1.005))
        #expect(backlog.isMeasureDue(at: 1.011))
        // ...unless a quarter of the bound was handed over since (a turn of many pages).
        backlog.onReplySent(to: Self.routing(1), bytes: 500)
        #expect(backlog.isMeasureDue(at: 1.005))
    }

    @Test func idleConnectionsHoldingNothingAreForgottenAndTheTableStaysBounded() {
        let probe = FakeProbe()
        var backlog = ReplyBacklog(totalBytes: 1 << 40, maxTracked: 16, forgetAfterSeconds: 60, measureIntervalSeconds: 0)
        for n in 0..<16 {
            probe.add(Int32(n), inode: UInt64(n))
            backlog.onRequest(from: Self.routing(UInt8(n)), descriptor: Int32(n), at: Double(n), probe: probe)
        }
        // Connection 0 holds replies; at the bound the least recent of those holding nothing go first.
        backlog.onReplySent(to: Self.routing(0), bytes: 100)
        probe.add(16, inode: 16)
        backlog.onRequest(from: Self.routing(16), descriptor: 16, at: 16, probe: probe)
        #expect(backlog.connections.count == 15)
        #expect(backlog.connections[Self.routing(0)] != nil)
        #expect(backlog.connections[Self.routing(1)] == nil && backlog.connections[Self.routing(2)] == nil)
        #expect(backlog.connections[Self.routing(16)] != nil)
        // A minute later only the one holding replies is kept.
        backlog.forgetIdle(at: 16 + 60)
        #expect(Array(backlog.connections.keys) == [Self.routing(0)])
    }
}
