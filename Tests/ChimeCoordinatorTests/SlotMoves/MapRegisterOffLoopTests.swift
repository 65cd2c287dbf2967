import ChimeClient
import ChimeCore
import ChimeJournal
import ChimeRuntime
import ChimeTestSupport
import ChimeWire
import Foundation
import HelperThreads
import Synchronization
import Testing
import ZeroMQ

@testable import ChimeCoordinator

/// A coordinator's loop (real sockets over `inproc://`, the real clock) following its map
/// register off the loop: with the register in a ConfigMap on a stand-in API server that
/// answers every request 3 s late, pings are answered at once and the register's new map
/// epoch is still adopted once the slow read returns; a `move` step that reads the register
/// is answered `try_again` until a read that started after it is in.
@Suite(.serialized) struct MapRegisterOffLoopTests {
    static let map = SlotMapRegisterFileTests.map
    static let move = SlotMapRegisterFileTests.move
    static let registerName = "chime-shard-map"

    /// A coordinator serving shard 0 of `map` on a thread, with `register`.
    final class Coordinator {
        let context: Context
        let configuration: ChimeConfiguration
        let capture = CapturingLogHandler()
        private let stopSignal = StopSignal()
        private let thread = HelperThread(name: "coordinator")
        private let failure = StartFailure()
        /// The service's probe (its `/metrics`), once the loop thread made the service.
        let probeSlot = ProbeSlot()
        final class ProbeSlot: Sendable { let value = Mutex<CoordinatorProbe?>(nil) }

        init(register: any SlotMapRegistering, pollInterval: Duration = .seconds(1)) throws {
            context = try Context()
            var configuration = ChimeConfiguration()
            let prefix = "inproc://chime-register-test-\(UUID().uuidString)"
            for path in [\ChimeConfiguration.endpoints.control, \.endpoints.dispatch, \.endpoints.results, \.endpoints.events, \.endpoints.eventsIngest] {
                let endpoint = "\(prefix)-\(UUID().uuidString)"
                configuration[keyPath: path] = .init(bind: endpoint, connect: endpoint)
            }
            configuration.store.directory = "none"
            configuration.lingerMilliseconds = 0
            self.configuration = configuration
            let settings = configuration
            let logger = Logger(label: "coordinator", minimumLevel: .info, handler: capture)
            let (stop, context, failure, probeSlot) = (stopSignal, context, failure, probeSlot)
            let ready = DispatchSemaphore(value: 0)
            thread.start {
                let service = CoordinatorService(
                    configuration: settings, logger: logger, stop: stop, context: context, shardMap: MapRegisterOffLoopTests.map,
                    shardID: 0)
                service.mapRegister = register
                service.mapRegisterPollInterval = pollInterval
                probeSlot.value.withLock { $0 = service.probe }
                do {
                    try service.run { ready.signal() }
                } catch {
                    failure.message.withLock { $0 = "\(error)" }
                    ready.signal()
                }
            }
            guard ready.wait(timeout: .now() + 5) == .success else { throw DeadlineExceeded(what: "the coordinator to be ready", seconds: 5) }
            if failure.message.withLock({ $0 }) != nil { throw failure }
        }

        /// A control client (3 s per attempt, no retries).
        func client() throws -> ControlClient {
            try ControlClient(endpoint: configuration.endpoints.control.connect, timeout: .seconds(3), retries: 0, context: context)
        }

        /// Stops the loop and waits for its thread (the register's reader is stopped with it).
        func stop() -> Bool {
            stopSignal.requestStop()
            return thread.join(timeout: .seconds(5))
        }

        var lines: [String] { capture.all.map(\.message) }

        /// A DEALER on the control endpoint that receives for at most 3 s.
        func dealer() throws -> Socket {
            let socket = try Socket(.dealer, context: context)
            try socket.set(.linger(milliseconds: 0))
            try socket.set(.receiveTimeout(milliseconds: 3000))
            try socket.connect(to: configuration.endpoints.control.connect)
            return socket
        }
    }

    /// One request and its reply over `dealer` (no retry, unlike `ControlClient`), and how long it took.
    static func exchange(_ body: Data, on dealer: Socket) throws -> (ControlReply<EmptyResult>, Duration) {
        let sent = ContinuousClock.now
        _ = try dealer.send([Data(), body], dontWait: false)
        let frames = try #require(try dealer.receiveMessage())
        let took = ContinuousClock.now - sent
        return (try JSONDecoder().decode(ControlReply<EmptyResult>.self, from: try #require(frames.last)), took)
    }

    /// Why the coordinator did not start.
    final class StartFailure: Error, Sendable, CustomStringConvertible {
        let message = Mutex<String?>(nil)
        var description: String { message.withLock { $0 } ?? "no failure" }
    }

    /// A `move` request for the step `move` with `requestId`.
    static func moveRequest(_ move: SlotMoveRequest, requestId: String) -> ControlRequest {
        ControlRequest(requestId: requestId, command: .move(move))
    }

    /// The shard's move status (`status` reads no register: answered at once).
    static func status(_ client: ControlClient) throws -> SlotMoveStatus {
        let reply = try client.send(moveRequest(.status(), requestId: UUID().uuidString), expecting: SlotMoveStatus.self)
        return try #require(reply.result)
    }

    @Test func aSlowAPIServerDelaysNeitherPingsNorTheAdoptionOfItsRecord() throws {
        let server = try KubernetesAPIStandIn(namespace: "chime")
        let access = KubernetesAPIAccess(baseURL: server.baseURL, tokenFile: nil, certificateAuthorityFile: nil, namespace: "chime")
        let register = SlotMapRegisterConfigMap(name: Self.registerName, access: access)
        let records = try MapRegisterHandoffTests.records()
        #expect(try register.createIfAbsent(map: Self.map) == records[0])
        let coordinator = try Coordinator(register: register)
        let client = try coordinator.client()
        try expectEventually(timeout: 5, "the first read") { try Self.status(client).registerVersion == 1 }

        // Every answer 3 s late from now; the register holds map epoch 2 (version 3).
        let delay = 3.0
        server.setFaults { $0.delay = delay }
        let requestsBefore = server.requests.count
        server.put(
            Self.registerName, data: [SlotMapRegisterConfigMap.dataKey: String(decoding: SlotMapRegisterFile.encode(records[2]), as: UTF8.self)])
        try expectEventually(timeout: 5, interval: 0.005, "a slow GET under way") { server.requests.count > requestsBefore }
        let slowGETStarted = ContinuousClock.now
        var slowest = Duration.zero
        for _ in 0..<20 {
            let sent = ContinuousClock.now
            let pong = try client.send(ControlRequest(command: .ping), expecting: PongResult.self)
            #expect(pong.ok)
            slowest = max(slowest, ContinuousClock.now - sent)
        }
        // All twenty answered while the GET still waited (with half a second to spare).
        #expect(ContinuousClock.now - slowGETStarted < .seconds(delay - 0.5))
        #expect(slowest < .milliseconds(500), "slowest ping \(slowest)")

        // A `follow` step reads the register: `try_again` at once, the same request again
        // `try_again` while the fresh read it asked for waits on the slow API server.
        let follow = WireCodec().encode(Self.moveRequest(.follow(SlotMoveID("m-none")), requestId: "follow-1"))
        let dealer = try coordinator.dealer()
        defer { dealer.close() }
        for retryAfter in [5, 10, 20, 40] {
            let (reply, took) = try Self.exchange(follow, on: dealer)
            #expect(reply.ok == false)
            #expect(reply.requestId == "follow-1")
            #expect(reply.error?.code == .tryAgain)
            #expect(reply.error?.retryAfterMilliseconds == retryAfter)
            #expect(took < .milliseconds(500), "try_again after \(took)")
        }

        // The slow reads return (a stamp, then the record; each 3 s): epoch 2 is adopted.
        try expectEventually(timeout: 20, interval: 0.05, "map epoch 2") { try Self.status(client).mapEpoch == 2 }
        let adopted = try Self.status(client)
        #expect(adopted.registerVersion == 3)
        #expect(adopted.mapEpoch == 2)
        let epochLines = coordinator.lines.filter { $0.contains("map epoch 1 → 2") }
        #expect(epochLines == ["map register configmap chime/\(Self.registerName): map epoch 1 → 2"])
        // `/metrics` names the epoch the loop now serves under, not the one it started with.
        let probe = try #require(coordinator.probeSlot.value.withLock { $0 })
        #expect(probe.mapEpoch == 2)
        let exposition = String(decoding: probe.metricsResponse().body, as: UTF8.self)
        #expect(exposition.contains(#"chime_shard_info{shard="0",map_epoch="2"} 1"#), "\(exposition.prefix(400))")
        // The same request, once a read that started after it is in: decided.
        try expectEventually(timeout: 20, interval: 0.05, "the follow step decided") {
            let (reply, took) = try Self.exchange(follow, on: dealer)
            #expect(took < .milliseconds(500), "reply after \(took)")
            return reply.ok
        }
        #expect(coordinator.stop())
        #expect(!coordinator.lines.contains { $0.contains("does not read") }, "\(coordinator.lines)")
    }

    /// The backoff of a step waiting for a fresh read: doubling from 5 ms, at most 1 s; the 20
    /// waits a `ControlClient` makes add up to more than two reads at the 5 s timeout.
    @Test func aStepWaitingForAFreshReadBacksOff() {
        let waits = (0..<20).map { CoordinatorState.freshMapReadRetryMilliseconds(afterRefusals: $0) }
        #expect(waits == [5, 10, 20, 40, 80, 160, 320, 640] + Array(repeating: 1_000, count: 12))
        #expect(waits.reduce(0, +) == 13_275)
        #expect(ControlClient.maximumRateLimitedWaits == 20)
    }

    @Test func aMoveStepSeesTheRegisterAsItIsNowWithoutAPeriodicRead() throws {
        let directory = try TemporaryDirectory(prefix: "register")
        let register = SlotMapRegisterFile(path: directory.url.appendingPathComponent("map.json").path)
        _ = try register.createIfAbsent(map: Self.map)
        // Only the first read is periodic: what the step sees, a fresh read brought.
        let coordinator = try Coordinator(register: register, pollInterval: .seconds(3600))
        let client = try coordinator.client()
        try expectEventually(timeout: 5, "the first read") { try Self.status(client).registerVersion == 1 }
        #expect(try register.compareAndSwap(expectedVersion: 1, try #require(SlotMapRecord(map: Self.map).opening(Self.move))))

        // `begin` right after the open: the client waits out its `try_again`s.
        let begin = Self.moveRequest(.begin(Self.move), requestId: "begin-1")
        let reply = try client.send(begin, expecting: SlotMoveStatus.self)
        let status = try #require(reply.result)
        #expect(status.registerVersion == 2)
        #expect(status.ledger.outgoing.map(\.move) == [Self.move])
        #expect(coordinator.stop())
    }

    /// A register whose stamp changes at every poll and whose reads all fail, each with
    /// another message, counting them.
    final class FailingRegister: SlotMapRegistering {
        private let stamps = Atomic<Int>(0)
        private let reads = Atomic<Int>(0)
        var qualifiedName: String { "the failing register" }
        var readCount: Int { reads.load(ordering: .relaxed) }
        func read() throws(WireError) -> SlotMapRecord? {
            let count = reads.wrappingAdd(1, ordering: .relaxed).newValue
            throw WireError(.unavailable, "cannot get (Operation timed out after \(5000 + count) milliseconds)")
        }
        func stamp() -> String? { "\(stamps.wrappingAdd(1, ordering: .relaxed).newValue)" }
        func compareAndSwap(expectedVersion: UInt64, _ new: SlotMapRecord) throws(WireError) -> Bool { false }
        func createIfAbsent(map: ShardMap) throws(WireError) -> SlotMapRecord { SlotMapRecord(map: map) }
    }

    @Test func aRegisterThatKeepsFailingIsLoggedOnceAMinute() throws {
        let register = FailingRegister()
        let coordinator = try Coordinator(register: register, pollInterval: .milliseconds(10))
        try expectEventually(timeout: 10, "30 failed reads") { register.readCount >= 30 }
        // The loop still answers at once.
        let client = try coordinator.client()
        _ = try client.send(ControlRequest(command: .ping), expecting: PongResult.self)
        #expect(coordinator.stop())
        let warnings = coordinator.lines.filter { $0.contains("does not read") }
        #expect(
            warnings == ["map register the failing register does not read (keeping map epoch 1): cannot get (Operation timed out after 5001 milliseconds)"],
            "\(warnings)")
    }
}
