import ChimeRuntime
import Dispatch
import Foundation
import HTTPServer
import Synchronization
import ZeroMQ

/// The one thread of a worker process that owns every shard's sockets: one `zmq_poll` over
/// each ``WorkerService``'s dispatch and events sockets, one ZeroMQ context, whatever the
/// shard count (before, each shard had a thread and a context, and a context has an I/O thread
/// and a reaper: three threads a shard).
///
/// A turn polls until the soonest service needs a turn (a heartbeat, an acknowledgement delay,
/// a held firing, at most 100 ms), sleeps the last sub-millisecond before the earliest held
/// firing of any service, then gives a turn to each service one of whose sockets is
/// readable or whose own deadline has passed (as its own loop would): up to 64 batches from its
/// socket, so one shard's burst cannot keep the others waiting beyond that.
///
/// Nothing in a turn blocks: a stopping service (its ``WorkerService/stop`` requested, by the
/// process's stop or its shard leaving the map) delivers what its socket holds at once, then
/// waits for its action hooks across turns (up to `WorkerService.stopGrace`) while the others
/// go on serving; then it says it leaves and closes. Services join from another thread
/// (``add(_:)``, the map reader) and are opened at the next turn; ``finished(_:)`` tells that
/// thread when one has left. The loop ends once its stop is requested and every service has
/// left (or at once when a shared context is shut down).
///
/// It serves HTTP (`/metrics`, `/healthz`, `/readyz` of `probe`) and notifies systemd for the
/// process: `READY=1` once the first services are connected, `WATCHDOG=1` from the turns,
/// `STOPPING=1` at the stop.
final class WorkerLoop: Sendable {
    /// Services handed in by another thread, and whether the loop has ended (then a service
    /// handed in is finished at once).
    private struct Inbox: Sendable {
        var joining: [UncheckedBox<WorkerService>] = []
        var hasEnded = false
    }

    let stop: StopSignal
    let logger: Logger
    private let context: UncheckedBox<Context?>
    let notifier: SystemdNotifier?
    let httpAddress: HTTPListenAddress?
    let probe: WorkerProbe
    private let inbox = Mutex(Inbox())

    /// - Parameters:
    ///   - stop: ends the loop once every service has left (each service has its own stop,
    ///     which this one should request).
    ///   - context: the ZeroMQ context for every service's sockets; `nil` makes one.
    ///   - notifier: told `READY=1`, `WATCHDOG=1` and `STOPPING=1`; `nil` notifies nobody.
    ///   - http: where to serve `probe`'s routes; `nil` serves no HTTP.
    init(stop: StopSignal, logger: Logger, context: Context?, notifier: SystemdNotifier?, http: HTTPListenAddress?, probe: WorkerProbe) {
        self.stop = stop
        self.logger = logger
        self.context = UncheckedBox(context)
        self.notifier = notifier
        self.httpAddress = http
        self.probe = probe
    }

    /// Hands `service` to the loop, which opens it at its next turn (within 100 ms). Safe from
    /// any thread. After the loop has ended the service is finished at once, never opened.
    func add(_ service: WorkerService) {
        let isTaken = inbox.withLock { inbox in
            guard !inbox.hasEnded else { return false }
            inbox.joining.append(UncheckedBox(service))
            return true
        }
        if !isTaken { service.end.finish() }
    }

    /// Runs the loop on the calling thread until the stop (see the type's documentation).
    /// - Parameters:
    ///   - starting: the services to open before the loop turns (their sockets connect, then
    ///     `onReady` is called and systemd told `READY=1`).
    /// - Throws: `HTTPServerError` when the HTTP address cannot be listened on; the first
    ///   `ZeroMQError` of a service's sockets (an invalid endpoint), after the other services
    ///   have left.
    func run(starting: [WorkerService], onReady: () -> Void = {}) throws {
        var services: [WorkerService] = []
        defer {
            let late = inbox.withLock { inbox in
                inbox.hasEnded = true
                defer { inbox.joining.removeAll() }
                return inbox.joining
            }
            for service in services + late.map(\.value) {
                service.close()
                service.end.finish()
            }
        }
        let httpServer = try httpAddress.map { address throws(HTTPServerError) in
            try HTTPServer(address: address) { [routes = probe.routes] in routes.respond(to: $0) }
        }
        defer { httpServer?.stop() }
        // Not shut down by the stop signal: the loop sees the flag within one turn (≤ 100 ms)
        // and then each service hands back what it holds over its still open sockets.
        let context = try self.context.value ?? Context()
        for service in starting {
            services.append(service)
            try service.open(context: context)
        }
        if let httpServer {
            logger.info("worker serving HTTP", ["http": "\(HTTPListenAddress(host: httpServer.address.host, port: httpServer.port))"])
        }
        let dispatch = starting.map(\.configuration.endpoints.dispatch.connect)
        notifier?.notifyReady(status: "worker: connected to \(dispatch.count == 1 ? dispatch[0] : "\(dispatch.count) shards")")
        onReady()
        var watchdog = WatchdogPacer(notifier: notifier)
        var isStopping = false
        var failure: (any Error)?
        var poller = Poller()
        /// The poller indices of each service's sockets, in the order of `services`.
        var registrations: [[Int]] = []
        var deadlines: [ContinuousClock.Instant] = []
        var needsRegistration = true
        do {
            while true {
                let turnStart = ContinuousClock.now
                watchdog.pingIfDue(at: turnStart)
                let joining = inbox.withLock { inbox in
                    defer { inbox.joining.removeAll() }
                    return inbox.joining
                }
                for box in joining {
                    services.append(box.value)
                    do {
                        try box.value.open(context: context)
                    } catch let error as ZeroMQError where error.code == .contextTerminated {
                        throw error
                    } catch {
                        failure = failure ?? error
                        stop.requestStop()
                    }
                    needsRegistration = true
                }
                if stop.isStopRequested && !isStopping {
                    isStopping = true
                    notifier?.notifyStopping(status: "worker: handing back and stopping")
                }
                // A service whose stop was requested begins leaving; one that has left goes.
                for service in services where service.link?.leavingBy == nil && (service.stop.isStopRequested || isStopping) {
                    try step(service) { try service.beginLeaving(at: turnStart) }
                    needsRegistration = true
                }
                var left: Set<ObjectIdentifier> = []
                for service in services where service.link?.leavingBy != nil || service.link == nil {
                    var hasLeft = service.link == nil
                    try step(service) { hasLeft = try service.advanceLeaving(at: ContinuousClock.now) }
                    if hasLeft { left.insert(ObjectIdentifier(service)) }
                }
                if !left.isEmpty {
                    // `advanceLeaving` closed them (and a failed one was closed by `step`).
                    for service in services where left.contains(ObjectIdentifier(service)) { service.end.finish() }
                    services.removeAll { left.contains(ObjectIdentifier($0)) }
                    needsRegistration = true
                }
                if isStopping && services.isEmpty { break }
                if needsRegistration {
                    poller = Poller()
                    registrations = services.map { $0.register(in: poller) }
                    needsRegistration = false
                }
                // Each service's own deadline: it turns when one of its sockets is readable or
                // its deadline has passed, as its own loop would, so an idle shard costs a turn
                // only every 100 ms however busy the others are.
                let pollStart = ContinuousClock.now
                var wait = 0.1
                deadlines.removeAll(keepingCapacity: true)
                for service in services {
                    let own = service.wait()
                    wait = min(wait, own)
                    deadlines.append(pollStart + .microseconds(Int64(own * 1_000_000)))
                }
                _ = try poller.poll(timeout: .microseconds(Int64(wait * 1_000_000)))
                // The poll woke up to a millisecond before the earliest held firing: the rest
                // is slept, once for every service.
                let heldDue = services.compactMap { $0.link?.leavingBy == nil ? $0.heldDueIn : nil }.min()
                if let heldDue, heldDue > 0, heldDue <= WorkerService.heldFiringSleep { Thread.sleep(forTimeInterval: heldDue) }
                let polled = ContinuousClock.now
                for (index, service) in services.enumerated() {
                    let isReadable = registrations[index].contains { !poller.events(at: $0).isEmpty }
                    guard isReadable || polled >= deadlines[index] else { continue }
                    try step(service) {
                        if try service.turn(at: turnStart) { needsRegistration = true }
                    }
                }
            }
        } catch let error as ZeroMQError where error.code == .contextTerminated {
            // A shared context shut down by its owner: unacknowledged firings are redelivered by lease.
            for service in services {
                logger.info("worker stopping", ["id": "\(service.id.rawValue)", "delivered": .int(service.state.deliveredCount)])
            }
            return
        }
        if let failure { throw failure }

        /// Runs one service's step; an error other than a shut-down context closes that
        /// service (it cannot hand back over a broken socket: its firings go by lease), keeps
        /// the first such error to throw at the end and stops the others.
        func step(_ service: WorkerService, _ body: () throws -> Void) throws {
            do {
                try body()
            } catch let error as ZeroMQError where error.code == .contextTerminated {
                throw error
            } catch {
                logger.error("a shard's service failed; stopping", ["id": "\(service.id.rawValue)", "reason": "\(error)"])
                failure = failure ?? error
                service.close()
                needsRegistration = true
                stop.requestStop()
            }
        }
    }
}

/// That a ``WorkerService`` has left its ``WorkerLoop`` (handed back and closed, or never
/// opened), for the thread that asked it to stop. Finished once; later calls change nothing.
final class ServiceEnd: Sendable {
    private let finished = Atomic<Bool>(false)
    private let semaphore = DispatchSemaphore(value: 0)

    init() {}

    /// Records the end and wakes the waiter (once).
    func finish() {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return }
        semaphore.signal()
    }

    /// Whether ``finish()`` was called.
    var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// Waits until ``finish()`` was called.
    func wait() {
        guard !isFinished else { return }
        semaphore.wait()
        semaphore.signal()
    }
}
