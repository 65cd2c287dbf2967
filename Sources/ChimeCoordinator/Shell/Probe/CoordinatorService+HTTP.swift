import ChimeRuntime
import ChimeStore
import ChimeWire
import Foundation
import HTTPServer

/// HTTP for machines: `/metrics` (Prometheus text format 0.0.4), `/healthz` (the loop is
/// turning) and `/readyz` (active: recovered, owning the store, the store takes writes),
/// served on libmicrohttpd's thread from `probe`; the loop only stores an instant a turn and,
/// when a scrape asks, publishes a snapshot.
extension CoordinatorService {
    /// The routes every coordinator serves.
    static func routes(for probe: CoordinatorProbe) -> HTTPRoutes {
        HTTPRoutes([
            "/metrics": { probe.metricsResponse() },
            "/healthz": { probe.health() },
            "/readyz": { probe.readiness() },
        ])
    }

    /// Starts the HTTP server on `httpAddress`, if any. A standby on the same host as the
    /// active coordinator finds the address taken; it then serves HTTP from its takeover on.
    /// - Throws: `HTTPServerError` when the address cannot be listened on (a standby: only
    ///   when it is not merely in use).
    func startHTTP(isStandby: Bool) throws -> HTTPServer? {
        guard let httpAddress = setup.httpAddress else { return nil }
        let routes = Self.routes(for: probe)
        let server: HTTPServer
        do throws(HTTPServerError) {
            server = try HTTPServer(address: httpAddress) { routes.respond(to: $0) }
        } catch {
            guard isStandby && error.code == .cannotListen else { throw error }
            logger.warning(
                "http address taken (the active coordinator on this host?); serving it after a takeover",
                ["listen": httpAddress.description])
            return nil
        }
        // Logged with "coordinator ready" (`httpDescription`): a start that fails later
        // prints one line.
        return server
    }

    /// The second try of a standby whose HTTP address was taken: the coordinator it took over
    /// from releases it before its lock (`ListenerHandover`), or was killed; retried while
    /// the address is in use, until `deadline`.
    /// - Throws: `HTTPServerError` when the address is still taken at the deadline (or cannot
    ///   be listened on at all): a coordinator does not serve without an endpoint it was
    ///   configured with, where Kubernetes' probes would never find it ready.
    func startHTTPAfterTakeover(until deadline: ContinuousClock.Instant) throws -> HTTPServer? {
        guard let httpAddress = setup.httpAddress else { return nil }
        let routes = Self.routes(for: probe)
        var hasWaited = false
        while true {
            do throws(HTTPServerError) {
                return try HTTPServer(address: httpAddress) { routes.respond(to: $0) }
            } catch {
                guard error.code == .cannotListen, ContinuousClock.now < deadline else {
                    logger.error("http not served after the takeover; stopping", ["listen": httpAddress.description, "error": "\(error)"])
                    throw error
                }
                if !hasWaited {
                    hasWaited = true
                    logger.info("waiting for the http address to be released", ["listen": httpAddress.description])
                }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
    }

    /// Where `server` listens, for the start-up line: `HOST:PORT`, or `off`.
    static func httpDescription(_ server: HTTPServer?) -> String {
        guard let server else { return "off" }
        let address = HTTPListenAddress(host: server.address.host, port: server.port)
        return address.description
    }

    /// Takes the snapshot a scrape waits for.
    func publishMetrics() {
        var metrics = state.metrics(at: clock.now)
        metrics.requests = telemetry.requestCounts
        metrics.requestDurations = telemetry.requestDurations
        metrics.turnDuration = telemetry.turnDuration
        metrics.slowestTurnSeconds = telemetry.slowestTurnSeconds
        metrics.controlRepliesDropped = outbox.unread.repliesDropped
        metrics.controlRequestsDropped = outbox.unread.requestsDropped + inbound.pendingRefusals
        metrics.controlPendingBytes = inbound.fairQueue.pendingBytes
        metrics.controlConnectionsNotReading = outbox.unread.count
        metrics.controlReplyBacklogBytes = outbox.replyBacklog.estimatedTotal
        metrics.controlConnectionsDropped = outbox.replyBacklog.connectionsCut
        metrics.dispatchBacklogBytes = outbox.dispatchBacklog.estimatedTotal
        metrics.dispatchConnectionsDropped = outbox.dispatchBacklog.connectionsCut
        metrics.dispatchBatchesHeld = outbox.dispatchBacklog.handOversRefused
        probe.publish(metrics)
    }

    /// Counts one loop turn that began at `start` (after the poll returned).
    func noteTurnDuration(since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        telemetry.turnDuration.observe(seconds)
        telemetry.slowestTurnSeconds = max(telemetry.slowestTurnSeconds, seconds)
    }

    /// Publishes the snapshot files' size and the newest one's time: `writtenAt` after a
    /// snapshot this process wrote (nothing read from disk on the loop), else, at start, the
    /// newest file's modification time.
    func publishSnapshotFigures(writtenAt: Date? = nil) {
        guard case .file(let fileStore) = store.storage else { return }
        let statistics = store.journalWriter.map { fileStore.statistics(journal: $0.statistics) } ?? fileStore.statistics
        var newestTime = writtenAt?.timeIntervalSince1970
        if writtenAt == nil, let newest = try? fileStore.snapshots.list().last,
            let modified = (try? FileManager.default.attributesOfItem(atPath: newest.path))?[.modificationDate] as? Date
        {
            newestTime = modified.timeIntervalSince1970
        }
        probe.updateStore {
            $0.hasStore = true
            $0.journalBytes = statistics.journalBytes
            $0.snapshotBytes = statistics.snapshotBytes
            $0.lastSnapshotAt = newestTime
        }
    }

    /// Counts one answered control request by operation and reply code, with its duration.
    /// A request answered at once while the store is full (a read or a refusal), or a store
    /// operation, counts as `ok`, or `store_full` when it changes something while the store
    /// is full.
    func recordRequest(_ directives: [CoordinatorDirective], since started: ContinuousClock.Instant) {
        var code = "ok"
        if let request = inbound.decodedRequest, state.isStoreFull,
            request.isMutating || [.snapshot, .compact, .store].contains(request.operation)
        {
            code = WireError.Code.storeFull.rawValue
        }
        for directive in directives {
            if case .reply(.failed(let error), _, _) = directive {
                code = error.code.rawValue
                break
            }
        }
        let operation = inbound.decodedRequest?.operation.rawValue ?? "undecodable"
        telemetry.requestCounts[CoordinatorMetrics.RequestKey(operation: operation, code: code), default: 0] += 1
        let elapsed = (ContinuousClock.now - started).components
        telemetry.requestDurations[operation, default: Histogram(upperBounds: Histogram.durationSecondsBounds)]
            .observe(Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
    }
}
