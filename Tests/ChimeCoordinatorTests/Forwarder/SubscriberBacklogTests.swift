import Foundation
import Testing

@testable import ChimeCoordinator

/// The bound on what subscribers that fall behind hold together (issue 37 item 1): a
/// subscriber whose kernel queue has unsent bytes may hold every event forwarded since the
/// sample before, up to its own bound; past the total the one behind longest is cut.
@Suite struct SubscriberBacklogTests {
    typealias Probe = ConnectionBacklogTests.FakeProbe
    static let overhead = SubscriberBacklog.frameOverheadBytes

    static func forward(_ backlog: inout SubscriberBacklog, events: Int, bytes: Int) {
        for _ in 0..<events { backlog.onForwarded(bytes: bytes) }
    }

    @Test func aSubscriberWithUnsentBytesMayHoldWhatWasForwardedSinceTheSampleBefore() {
        let probe = Probe()
        probe.add(5, inode: 50)
        var backlog = SubscriberBacklog(totalBytes: 1 << 30, perConnectionBytes: 1 << 20)
        backlog.onAccepted(5, socket: probe.identity(of: 5))
        Self.forward(&backlog, events: 10, bytes: 300)
        // Keeping up: nothing unsent, nothing counted.
        probe.notSent[5] = 0
        #expect(backlog.sample(at: 0, probe: probe).isEmpty)
        #expect(backlog.estimatedTotal == 0)
        Self.forward(&backlog, events: 4, bytes: 1_000)
        // Unsent bytes now: it may have filled up right after the last sample.
        probe.notSent[5] = 65_536
        #expect(backlog.sample(at: 0.1, probe: probe).isEmpty)
        #expect(backlog.estimatedTotal == 4 * (1_000 + Self.overhead))
        Self.forward(&backlog, events: 2, bytes: 1_000)
        #expect(backlog.sample(at: 0.2, probe: probe).isEmpty)
        #expect(backlog.estimatedTotal == 6 * (1_000 + Self.overhead))
        // It read again: cleared.
        probe.notSent[5] = 0
        #expect(backlog.sample(at: 0.3, probe: probe).isEmpty)
        #expect(backlog.estimatedTotal == 0)
        #expect(backlog.connections[5]?.behindSince == nil)
    }

    @Test func oneSubscribersEstimateStopsAtItsOwnBound() {
        let probe = Probe()
        probe.add(3, inode: 30)
        probe.notSent[3] = 1
        var backlog = SubscriberBacklog(totalBytes: 1 << 30, perConnectionBytes: 10_000)
        backlog.onAccepted(3, socket: probe.identity(of: 3))
        _ = backlog.sample(at: 0, probe: probe)
        Self.forward(&backlog, events: 100, bytes: 1_000)
        _ = backlog.sample(at: 1, probe: probe)
        #expect(backlog.estimatedTotal == 10_000)
    }

    @Test func pastTheTotalTheSubscribersBehindLongestAreCutUntilTheRestFit() {
        let probe = Probe()
        var backlog = SubscriberBacklog(totalBytes: 12_000, perConnectionBytes: 1 << 20)
        for descriptor: Int32 in [1, 2, 3, 4] {
            probe.add(descriptor, inode: UInt64(descriptor))
            backlog.onAccepted(descriptor, socket: probe.identity(of: descriptor))
        }
        // Events of 872 bytes: 1,000 with their overhead. 1 falls behind first, then 2, then 3;
        // 4 keeps up. Each counts from the sample before the one that found it.
        Self.forward(&backlog, events: 1, bytes: 872)
        probe.notSent[1] = 10
        _ = backlog.sample(at: 0, probe: probe)
        Self.forward(&backlog, events: 2, bytes: 872)
        probe.notSent[2] = 10
        #expect(backlog.sample(at: 0.1, probe: probe).isEmpty)
        #expect(backlog.estimatedTotal == 3_000 + 2_000)
        Self.forward(&backlog, events: 2, bytes: 872)
        probe.notSent[3] = 10
        #expect(backlog.sample(at: 0.2, probe: probe).isEmpty)
        #expect(backlog.estimatedTotal == 5_000 + 4_000 + 2_000)
        Self.forward(&backlog, events: 1, bytes: 872)
        // 6,000 + 5,000 + 3,000 = 14,000: cutting 1 leaves 8,000.
        let cut = backlog.sample(at: 0.3, probe: probe)
        #expect(cut.map(\.descriptor) == [1])
        #expect(cut.map(\.bytes) == [6_000])
        #expect(probe.cuts == [1])
        #expect(backlog.estimatedTotal == 8_000)
        #expect(backlog.connections[1] == nil)
        #expect(backlog.connections.count == 3)
    }

    @Test func aDescriptorReusedOrClosedIsForgottenAndAUnixSocketIsNeverBehind() {
        let probe = Probe()
        probe.add(7, inode: 70)
        probe.add(8, inode: 80)
        probe.sockets[9] = .init(device: 1, inode: 90)  // a Unix socket: no unsent count
        var backlog = SubscriberBacklog(totalBytes: 1, perConnectionBytes: 1 << 20)
        for descriptor: Int32 in [7, 8, 9] { backlog.onAccepted(descriptor, socket: probe.identity(of: descriptor)) }
        probe.notSent[7] = 5
        probe.notSent[8] = 5
        probe.sockets[7] = .init(device: 1, inode: 71)
        probe.sockets[8] = nil
        Self.forward(&backlog, events: 3, bytes: 100)
        #expect(backlog.sample(at: 0, probe: probe).isEmpty)
        #expect(probe.cuts.isEmpty)
        #expect(Array(backlog.connections.keys) == [9])
        #expect(backlog.estimatedTotal == 0)
        backlog.onDisconnected(9)
        #expect(!backlog.isSampleDue(at: 1))
    }

    @Test func samplesAreSpacedAndOnlyWithSubscribers() {
        let probe = Probe()
        probe.add(4, inode: 4)
        var backlog = SubscriberBacklog(totalBytes: 1, perConnectionBytes: 1, sampleIntervalSeconds: 0.1)
        #expect(!backlog.isSampleDue(at: 0))
        backlog.onAccepted(4, socket: probe.identity(of: 4))
        #expect(backlog.isSampleDue(at: 0))
        _ = backlog.sample(at: 0, probe: probe)
        #expect(!backlog.isSampleDue(at: 0.05))
        #expect(backlog.isSampleDue(at: 0.1))
    }

    @Test func aReaderThatLagsForOneSampleIsNotCutBesideSubscribersStuckAtTheirBound() {
        // The attack that tied them: four stuck subscribers at their bound pin the estimate
        // just under the total, and a reader found behind once adds its bound too.
        let probe = Probe()
        var backlog = SubscriberBacklog(totalBytes: 4 * 10_000 + 100, perConnectionBytes: 10_000)
        for descriptor: Int32 in 1...5 {
            probe.add(descriptor, inode: UInt64(descriptor))
            backlog.onAccepted(descriptor, socket: probe.identity(of: descriptor))
        }
        for descriptor: Int32 in 1...4 { probe.notSent[descriptor] = 1 }
        _ = backlog.sample(at: 0, probe: probe)
        Self.forward(&backlog, events: 100, bytes: 872)
        #expect(backlog.sample(at: 0.1, probe: probe).isEmpty)
        #expect(backlog.estimatedTotal == 40_000)
        Self.forward(&backlog, events: 100, bytes: 872)
        probe.notSent[5] = 1  // the reader lags for one sample, at its bound too
        let cut = backlog.sample(at: 0.2, probe: probe)
        #expect(cut.count == 1)
        #expect(cut.first.map { (1...4).contains($0.descriptor) } == true)
        #expect(backlog.connections[5] != nil)
        #expect(!probe.cuts.contains(5))
    }
}
