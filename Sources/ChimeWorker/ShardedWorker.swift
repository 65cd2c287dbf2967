import ChimeCore
import ChimeRuntime
import ChimeSecurity
import Foundation
import HTTPServer
import HelperThreads
import Synchronization

/// A worker process serving every shard of a cluster: one ``WorkerService`` per shard, each
/// on its own thread with its own sockets (a DEALER to the shard's dispatch, a PUSH to its
/// results, an XPUB to its events ingest) and its own ``WorkerState`` (credit, pending
/// acknowledgements, the highest epoch seen: a shard's epochs are its own).
///
/// Every acknowledgement and result thus goes back to the shard that dispatched the firing,
/// and each fire event is published once, into that shard's stream, carrying its id (never a
/// PUSH connected to several shards, which would round-robin). The worker's capacity is split
/// evenly (`capacity / shards`, at least 1 each), so the shards together never hold more
/// than it; the first shard's service serves HTTP and notifies systemd for the process.
public final class ShardedWorker {
    /// One shard to serve: its id and the configuration whose endpoints are the shard's.
    public struct Part: Sendable {
        /// The shard id its events carry.
        public var shard: Int
        /// The configuration with `endpoints` set to the shard's (`selectingShard`).
        public var configuration: ChimeConfiguration

        /// Creates the value from its fields (see each property for meaning and units).
        public init(shard: Int, configuration: ChimeConfiguration) {
            self.shard = shard
            self.configuration = configuration
        }
    }

    let parts: [Part]
    let id: WorkerID?
    let logger: Logger
    let stop: StopSignal
    let curve: CurveClientKeys?
    let notifier: SystemdNotifier?
    let http: HTTPListenAddress?

    /// - Parameters: as for ``WorkerService``; `parts` holds one entry per shard (at least one).
    public init(
        parts: [Part], id: WorkerID?, logger: Logger, stop: StopSignal, curve: CurveClientKeys? = nil,
        notifier: SystemdNotifier? = nil, http: HTTPListenAddress? = nil
    ) {
        precondition(!parts.isEmpty, "a sharded worker serves at least one shard")
        self.parts = parts
        self.id = id
        self.logger = logger
        self.stop = stop
        self.curve = curve
        self.notifier = notifier
        self.http = http
    }

    /// The per-shard capacity: the worker's capacity split evenly, at least 1.
    public static func capacity(_ total: Int, shards: Int) -> Int { max(1, total / max(1, shards)) }

    /// Serves every shard until the stop signal; the first failure of any shard's service
    /// stops them all and is rethrown.
    /// - Throws: what a ``WorkerService/run(onReady:)`` throws.
    public func run() throws {
        let host = ProcessInfo.processInfo.hostName
        let workerID = id ?? WorkerID("\(host)-\(getpid())")
        let failure = Mutex<(any Error)?>(nil)
        func service(_ index: Int) -> WorkerService {
            var configuration = parts[index].configuration
            configuration.worker.capacity = Self.capacity(configuration.worker.capacity, shards: parts.count)
            var shardLogger = logger
            shardLogger.metadata["shard"] = .int(parts[index].shard)
            return WorkerService(
                configuration: configuration, id: workerID, logger: shardLogger, stop: stop,
                curve: curve, notifier: index == 0 ? notifier : nil, http: index == 0 ? http : nil, shard: parts[index].shard)
        }
        let threads = parts.indices.dropFirst().map { index in
            let thread = HelperThread(name: "chime-worker-shard-\(parts[index].shard)")
            let worker = UncheckedBox(service(index))
            thread.start { [stop] in
                do {
                    try worker.value.run()
                } catch {
                    failure.withLock { $0 = $0 ?? error }
                    stop.requestStop()
                }
            }
            return thread
        }
        do {
            try service(0).run()
        } catch {
            failure.withLock { $0 = $0 ?? error }
            stop.requestStop()
        }
        for thread in threads { thread.join() }
        if let error = failure.withLock({ $0 }) { throw error }
    }
}

/// Hands a `WorkerService` to the one thread that runs it: made on this thread, used only
/// there afterwards (never shared), which is why the unchecked conformance is sound.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
