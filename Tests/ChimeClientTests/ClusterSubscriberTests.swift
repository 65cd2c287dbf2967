import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import Synchronization
import Testing
import ZeroMQ

@testable import ChimeClient

/// One thread polls every shard's events and catch-up (`EventStreams`): a shard whose
/// catch-up is never answered must hold up neither the other shards' events nor the stop.
@Suite struct ClusterSubscriberTests {
    /// Waits until `condition` holds or `seconds` pass; whether it held.
    func wait(seconds: Double, for condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { return false }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return true
    }

    func fire(_ seq: UInt64, shard: Int, of map: ShardMap) -> FireEvent {
        var event = FireEvent(
            seq: seq, publisher: "w",
            firing: Firing(
                reminderId: ReminderID("s\(shard)-\(seq)"), recipient: recipient(on: shard, of: map), dueAt: Date(timeIntervalSince1970: 1_798_099_200),
                content: Content()),
            firedAt: Date(timeIntervalSince1970: 1_798_099_200))
        event.shard = shard
        return event
    }

    @Test func aShardWhoseCatchUpIsNeverAnsweredHoldsUpNoOtherShardNorTheStop() throws {
        let context = try Context()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-cs-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let tag = "catchup-\(UUID().uuidString.prefix(8))"
        // Shard 0 never answers; shard 1 answers every `events` with nothing retained.
        let silent = try FakeShard(id: 0, context: context, tag: tag) { _, _ in nil }
        defer { silent.stop() }
        let answering = try FakeShard(id: 1, context: context, tag: tag) { _, request in
            FakeShard.ok(request, EventsResult(events: [], through: 0, oldestRetained: nil, truncated: false))
        }
        defer { answering.stop() }
        // The events endpoints over ipc: the subscription's own context cannot reach inproc.
        var map = fakeMap(tag: tag, shards: 2)
        var publishers: [Socket] = []
        defer { for socket in publishers { socket.close() } }
        for index in map.shards.indices {
            let endpoint = "ipc://\(directory.path)/events-\(index)"
            let socket = try Socket(.xpublisher, context: context)
            try socket.set(.linger(milliseconds: 0))
            try socket.bind(to: endpoint)
            publishers.append(socket)
            map.shards[index].endpoints.events = endpoint
        }

        let stop = StopSignal()
        let delivered = Mutex<[(id: String, silentRequests: Int)]>([])
        let ended = DispatchSemaphore(value: 0)
        let failure = Mutex<(any Error)?>(nil)
        let subscriber = ClusterSubscriber(map: map, recipient: nil, stop: stop)
        // 3 attempts of 5 s: a loop that waited for shard 0's catch-up would hold shard 1's
        // events for 15 s.
        let catchUp = ClusterSubscriber.CatchUp(timeout: .seconds(5), retries: 2, context: context, since: [:])
        let thread = Thread {
            defer { ended.signal() }
            do {
                try subscriber.run(catchUp: catchUp) { event, _ in
                    delivered.withLock { $0.append((event.firing.reminderId.rawValue, silent.requests.count)) }
                }
            } catch {
                failure.withLock { $0 = error }
            }
        }
        thread.start()

        // Shard 1's subscription arrives (XPUB passes it up), then its events are published.
        let poller = Poller()
        poller.register(publishers[1], for: .readable)
        var subscribed = false
        let deadline = Date().addingTimeInterval(5)
        while !subscribed, Date() < deadline {
            if try poller.poll(timeout: .milliseconds(50)) > 0, let frames = try publishers[1].receiveMessage(dontWait: true) {
                subscribed = frames.first?.first == 1
            }
        }
        #expect(subscribed, "shard 1's subscription arrived")
        let codec = WireCodec()
        for seq in UInt64(1)...3 {
            let event = fire(seq, shard: 1, of: map)
            _ = try publishers[1].send([Data(event.topic.utf8), codec.encode(event)], dontWait: false)
        }
        #expect(wait(seconds: 4) { delivered.withLock { $0.count } == 3 }, "shard 1's events within 4 s")
        let got = delivered.withLock { $0 }
        #expect(got.map(\.id) == ["s1-1", "s1-2", "s1-3"])
        #expect(got.map(\.silentRequests) == [1, 1, 1], "delivered while shard 0's first catch-up request was still awaited")
        #expect(answering.requests.count >= 1)

        // The stop ends the subscription at once, shard 0's catch-up still unanswered.
        let stoppedAt = Date()
        stop.requestStop()
        #expect(ended.wait(timeout: .now() + 2) == .success, "the subscription ended within 2 s of the stop")
        #expect(Date().timeIntervalSince(stoppedAt) < 2)
        #expect(silent.requests.count == 1, "no resend to shard 0 before the stop")
        #expect(failure.withLock { $0 } == nil)
    }
}
