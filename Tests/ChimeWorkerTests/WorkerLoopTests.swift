import ChimeCore
import ChimeRuntime
import ChimeTestSupport
import ChimeWire
import Foundation
import HelperThreads
import Testing
import ZeroMQ
@testable import ChimeWorker

/// One loop drives every shard's service: a shard that leaves while its action hook still
/// runs hands back only after the hook, and meanwhile the other shard's firings go out.
@Suite struct WorkerLoopTests {
    /// A shard's coordinator side, played over `inproc://`: the dispatch ROUTER, the results
    /// PULL and the events ingest XSUB (subscribed to everything, as the forwarder is).
    final class FakeShard {
        let dispatch: Socket
        let results: Socket
        let ingest: Socket
        var route: Data?
        let codec = WireCodec()

        init(_ name: String, context: Context) throws {
            dispatch = try Socket(.router, context: context)
            try dispatch.bind(to: "inproc://\(name)-dispatch")
            results = try Socket(.pull, context: context)
            try results.bind(to: "inproc://\(name)-results")
            ingest = try Socket(.xsubscriber, context: context)
            try ingest.bind(to: "inproc://\(name)-ingest")
            for socket in [dispatch, results, ingest] { try socket.set(.receiveTimeout(milliseconds: 100)) }
            _ = try ingest.send([Data([1])])
        }

        func endpoints(_ name: String) -> ChimeConfiguration.Endpoints {
            var endpoints = ChimeConfiguration.Endpoints()
            endpoints.dispatch = .init(bind: "inproc://\(name)-dispatch", connect: "inproc://\(name)-dispatch")
            endpoints.results = .init(bind: "inproc://\(name)-results", connect: "inproc://\(name)-results")
            endpoints.eventsIngest = .init(bind: "inproc://\(name)-ingest", connect: "inproc://\(name)-ingest")
            return endpoints
        }

        /// Waits (until `deadline`) for the worker's announcement and keeps its route.
        func awaitAnnouncement(by deadline: ContinuousClock.Instant) throws -> WorkerMessage? {
            while ContinuousClock.now < deadline {
                // A bound socket attaches a connecting peer only when its own thread calls it:
                // this lets the XSUB pass its subscription to the worker, whose event path is
                // then up by that subscription, not by `eventPathWait` (events published before
                // the subscription arrived would be dropped).
                _ = try ingest.receiveMessage(dontWait: true)
                guard let frames = try dispatch.receiveMessage(), frames.count == 2 else { continue }
                route = frames[0]
                return try codec.decode(WorkerMessage.self, from: frames[1])
            }
            return nil
        }

        func send(_ batch: DispatchBatch) throws {
            guard let route else { throw DeadlineExceeded(what: "the worker's announcement", seconds: 0) }
            _ = try dispatch.send([route] + codec.encodeFrames(batch))
        }

        /// The next fire or action event's topic, or `nil` at `deadline`.
        func nextEventTopic(by deadline: ContinuousClock.Instant) throws -> String? {
            while ContinuousClock.now < deadline {
                if let frames = try ingest.receiveMessage(), frames.count == 2 { return String(decoding: frames[0], as: UTF8.self) }
            }
            return nil
        }

        /// Firing ids acknowledged on results so far.
        var acknowledged: [String] = []

        /// Whether `firing` is acknowledged on results by `deadline`.
        func awaitAcknowledgement(of firing: Firing, by deadline: ContinuousClock.Instant) throws -> Bool {
            while ContinuousClock.now < deadline, !acknowledged.contains(firing.firingId.text) {
                guard let frames = try results.receiveMessage() else { continue }
                acknowledged += try codec.decodeWorkerMessage(frames).acks.map(\.firingId.text)
            }
            return acknowledged.contains(firing.firingId.text)
        }

        /// The next results message saying the worker leaves, or `nil` at `deadline`; the
        /// acknowledgements of every message read go to ``acknowledged``.
        func nextLeaving(by deadline: ContinuousClock.Instant) throws -> WorkerMessage? {
            while ContinuousClock.now < deadline {
                guard let frames = try results.receiveMessage() else { continue }
                let message = try codec.decodeWorkerMessage(frames)
                acknowledged += message.acks.map(\.firingId.text)
                if message.leaving == true { return message }
            }
            return nil
        }

        func close() {
            dispatch.close()
            results.close()
            ingest.close()
        }
    }

    static func firing(_ id: String, due: Date) -> Firing {
        var firing = Firing(reminderId: ReminderID(id), recipient: "alice", dueAt: due, content: Content(body: id))
        firing.seq = 1
        return firing
    }

    @Test func aShardLeavingWhileItsHookRunsHoldsUpNoOtherShard() throws {
        let context = try Context()
        let name = "wl-\(UInt32.random(in: 0...UInt32.max))"
        let shards = try (0..<2).map { try FakeShard("\(name)-\($0)", context: context) }
        defer { shards.forEach { $0.close() } }
        let logger = Logger(label: "worker-loop-test", minimumLevel: .warning)
        let loopStop = StopSignal()
        let serviceStops = [StopSignal(), StopSignal()]
        let services = (0..<2).map { index in
            var configuration = ChimeConfiguration()
            configuration.endpoints = shards[index].endpoints("\(name)-\(index)")
            configuration.heartbeat.intervalMilliseconds = 60_000
            configuration.worker.acknowledgementDelayMilliseconds = 0
            configuration.notifications.hooks = ["slow": "sleep 2"]
            configuration.notifications.actionTimeLimitSeconds = 10
            loopStop.onStop { serviceStops[index].requestStop() }
            return WorkerService(
                configuration: configuration, id: WorkerID("w"), logger: logger, stop: serviceStops[index], context: context,
                shard: index, channels: [:])
        }
        let loop = WorkerLoop(stop: loopStop, logger: logger, context: context, notifier: nil, http: nil, probe: WorkerProbe())
        let thread = HelperThread(name: "worker-loop-test")
        let starting = UncheckedBox(services)
        thread.start { try? loop.run(starting: starting.value) }
        defer {
            loopStop.requestStop()
            thread.join()
        }
        let deadline = ContinuousClock.now + .seconds(5)
        for shard in shards { #expect(try shard.awaitAnnouncement(by: deadline) != nil) }

        // Shard 0 runs a hook that takes 2 s, then leaves the worker at once.
        let t0 = Date()
        let job = ActionJob(
            jobId: "j", firing: Self.firing("a", due: t0), action: "slow", text: nil, destructive: false,
            activationMode: .background, category: nil, snoozeSeconds: nil)
        try shards[0].send(DispatchBatch(epoch: 1, leaseMilliseconds: 30_000, firings: [], jobs: [job]))
        try expectEventually(timeout: 5, "the hook to start") { services[0].actions.runningHooks == 1 }
        let leavingAsked = ContinuousClock.now
        serviceStops[0].requestStop()

        // While shard 0's service waits for its hook, shard 1's firings are published at once.
        // The loop reads the stop at the top of a turn, which the first batch may precede; a
        // firing is acknowledged at the end of the turn that delivered it, so the second batch
        // comes after a turn that has begun the leaving.
        for id in ["b1", "b2"] {
            try shards[1].send(DispatchBatch(epoch: 1, leaseMilliseconds: 30_000, firings: [Self.firing(id, due: t0)]))
            #expect(try shards[1].nextEventTopic(by: ContinuousClock.now + .seconds(1)) == "fire.alice", "\(id)'s fire event")
            #expect(try shards[1].awaitAcknowledgement(of: Self.firing(id, due: t0), by: ContinuousClock.now + .seconds(1)))
        }
        #expect(ContinuousClock.now - leavingAsked < .seconds(1))
        #expect(!services[0].end.isFinished, "shard 0 still waits for its hook")

        // Shard 0 leaves once the hook has ended, with its outcome, and the loop goes on.
        let leaving = try shards[0].nextLeaving(by: ContinuousClock.now + .seconds(6))
        let waited = ContinuousClock.now - leavingAsked
        #expect(leaving?.capacity == 0)
        #expect(leaving?.outcomes?.map(\.jobId) == ["j"])
        #expect(waited >= .milliseconds(1500) && waited < .seconds(5))
        try expectEventually(timeout: 2, "shard 0's service to have left") { services[0].end.isFinished }
        try shards[1].send(DispatchBatch(epoch: 1, leaseMilliseconds: 30_000, firings: [Self.firing("c", due: t0)]))
        #expect(try shards[1].nextEventTopic(by: ContinuousClock.now + .seconds(1)) == "fire.alice")

        // The process's stop: shard 1 leaves, having acknowledged both firings, and the loop ends.
        loopStop.requestStop()
        #expect(try shards[1].nextLeaving(by: ContinuousClock.now + .seconds(3))?.capacity == 0)
        #expect(shards[1].acknowledged == ["b1", "b2", "c"].map { Self.firing($0, due: t0).firingId.text })
        #expect(thread.join(timeout: .seconds(3)))
        #expect(services.allSatisfy { $0.end.isFinished && $0.link == nil })
    }

    @Test func aServiceAddedAfterTheLoopEndedIsFinishedAtOnce() throws {
        let loopStop = StopSignal()
        loopStop.requestStop()
        let loop = WorkerLoop(
            stop: loopStop, logger: Logger(label: "t", minimumLevel: .error), context: try Context(), notifier: nil, http: nil,
            probe: WorkerProbe())
        try loop.run(starting: [])
        let service = WorkerService(
            configuration: ChimeConfiguration(), id: WorkerID("w"), logger: Logger(label: "t", minimumLevel: .error),
            stop: StopSignal(), channels: [:])
        loop.add(service)
        #expect(service.end.isFinished)
        #expect(service.link == nil)
    }
}
