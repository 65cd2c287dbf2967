import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import HelperThreads
import Synchronization
import ZeroMQ
import ChimeClient
import ChimeCoordinator
import ChimeWorker

/// A coordinator (and optionally workers) running on threads of the test process, in one
/// ZeroMQ context with every endpoint on `inproc://`, on a `ManualClock`: the services'
/// real loops, sockets and journal, with time moved by hand.
///
/// No ports, no processes, no real waiting for due times or lease expiries (so no
/// acknowledgement delay unless `configure` sets one). Stop it with
/// `stop()` (also on deinit); each thread gets at most 5 s to finish.
public final class InprocCluster {
    /// The shared context: connect test sockets to `configuration.endpoints` through it.
    public let context: Context
    /// The time every service reads.
    public let clock: ManualClock
    /// The configuration the services run with (inproc endpoints).
    public let configuration: ChimeConfiguration
    /// A SUB socket on every fire event (`fire.`), connected before the workers start so
    /// none is missed (slow joiner); receives time out after 5 s. Use it from the test's
    /// thread only.
    public let firings: Socket
    private let stopSignal = StopSignal()
    private var threads: [HelperThread] = []
    private let failures = FailureLog()

    /// Starts a coordinator and `workers` workers and waits until each is ready.
    /// - Parameters:
    ///   - start: the manual clock's first instant (UTC).
    ///   - storeDirectory: the store directory, or `nil` for no store (`store.directory` none).
    ///   - configure: changes to the configuration before anything starts.
    /// - Throws: `DeadlineExceeded` when a service is not ready within 5 s; `ZeroMQError`.
    public init(
        start: Date, workers: Int = 0, storeDirectory: URL? = nil,
        configure: (inout ChimeConfiguration) -> Void = { _ in }
    ) throws {
        context = try Context()
        clock = ManualClock(start)
        var configuration = ChimeConfiguration()
        let prefix = "inproc://chime-test-\(UUID().uuidString)"
        func endpoint(_ name: String) -> ChimeConfiguration.Endpoint {
            .init(bind: "\(prefix)-\(name)", connect: "\(prefix)-\(name)")
        }
        configuration.endpoints.control = endpoint("control")
        configuration.endpoints.dispatch = endpoint("dispatch")
        configuration.endpoints.results = endpoint("results")
        configuration.endpoints.events = endpoint("events")
        configuration.endpoints.eventsIngest = endpoint("events-ingest")
        configuration.store.directory = storeDirectory?.path ?? "none"
        configuration.lingerMilliseconds = 0
        // Time stands still here: a worker holding its acknowledgements for a delay measured
        // on this clock would hold them until a test moves it. A test of the delay sets it.
        configuration.worker.acknowledgementDelayMilliseconds = 0
        configure(&configuration)
        self.configuration = configuration

        // Connected before anything binds (inproc allows it), so the subscription is there
        // before the first worker starts.
        firings = try SubscriberSocket.make(
            endpoint: configuration.endpoints.events.connect, topics: [Topic.firePrefix], highWaterMark: nil, curve: nil,
            context: context)
        try firings.set(.receiveTimeout(milliseconds: 5000))
        let logger = Logger(label: "inproc", minimumLevel: .warning)
        let (stop, clock, context, settings) = (stopSignal, clock, context, configuration)
        try launch(name: "coordinator") { ready in
            let coordinator = CoordinatorService(
                configuration: settings, logger: logger, stop: stop, clock: clock, context: context)
            try coordinator.run(onReady: ready)
        }
        for index in 0..<workers {
            try launch(name: "worker-\(index + 1)") { ready in
                let worker = WorkerService(
                    configuration: settings, id: WorkerID("worker-\(index + 1)"), logger: logger, stop: stop,
                    clock: clock, context: context)
                try worker.run(onReady: ready)
            }
        }
    }

    deinit {
        stop()
        firings.close()
    }

    /// A control client over `inproc://` (3 s per attempt, no retries).
    /// - Throws: `ZeroMQError`.
    public func controlClient() throws -> ControlClient {
        try ControlClient(endpoint: configuration.endpoints.control.connect, timeout: .seconds(3), retries: 0, context: context)
    }

    /// The next fire event on `firings`.
    /// - Throws: `DeadlineExceeded` after 5 s without one; `WireError` for an event that does
    ///   not decode.
    public func nextFireEvent() throws -> FireEvent {
        guard let frames = try firings.receiveMessage(), frames.count == 2 else {
            throw DeadlineExceeded(what: "a fire event", seconds: 5)
        }
        return try WireCodec().decode(FireEvent.self, from: frames[1])
    }

    /// Stops every service and waits (at most 5 s each) for its thread to end.
    public func stop() {
        stopSignal.requestStop()
        for thread in threads where !thread.join(timeout: .seconds(5)) {
            recordFailure("\(thread.name) did not stop within 5 s")
        }
        threads.removeAll()
    }

    /// What went wrong on the service threads (errors thrown by `run`, threads that hung).
    public var threadFailures: [String] { failures.all }

    private func recordFailure(_ failure: String) { failures.append(failure) }

    private func launch(name: String, _ body: @escaping @Sendable (_ ready: () -> Void) throws -> Void) throws {
        let ready = DispatchSemaphore(value: 0)
        let failures = failures
        let thread = HelperThread(name: name)
        thread.start {
            do {
                try body { ready.signal() }
            } catch {
                failures.append("\(name): \(error)")
                ready.signal()
            }
        }
        threads.append(thread)
        if ready.wait(timeout: .now() + 5) == .timedOut {
            throw DeadlineExceeded(what: "\(name) to be ready", seconds: 5)
        }
        if let failure = threadFailures.first { throw InprocClusterError(message: failure) }
    }
}

private final class FailureLog: Sendable {
    private let entries = Mutex<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// A service thread of an `InprocCluster` failed to start.
public struct InprocClusterError: Error, CustomStringConvertible {
    /// What failed.
    public var message: String
    public var description: String { message }
}
