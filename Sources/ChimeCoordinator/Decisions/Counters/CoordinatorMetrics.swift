import ChimeCore
import ChimeRuntime
import Foundation

/// The coordinator's figures for `/metrics`, taken by the loop at one instant when a scrape
/// asks (`CoordinatorProbe`), so the HTTP thread never reads the live state.
public struct CoordinatorMetrics: Sendable {
    /// One `chime_requests_total` series: the operation and the reply's error code (`ok`).
    public struct RequestKey: Hashable, Sendable, Comparable {
        /// The request's `op` (`schedule`, `list`, …; `undecodable` when it did not decode).
        public var operation: String
        /// The reply's error code (`invalid_argument`, …), or `ok`.
        public var code: String

        public static func < (lhs: RequestKey, rhs: RequestKey) -> Bool { (lhs.operation, lhs.code) < (rhs.operation, rhs.code) }
    }

    /// Reminders per state (every `ReminderState`, zeros included).
    public var remindersByState: [(state: String, count: Int)] = []
    /// Occurrences due and not handed to a worker: fired and waiting for credit, plus due in
    /// the schedule and not yet fired.
    public var dueBacklog = 0
    /// How long the oldest due, unacknowledged firing or occurrence has waited, in seconds.
    public var oldestUndeliveredAgeSeconds = 0.0
    /// Firings waiting for a worker with credit.
    public var waiting = 0
    /// Firings handed to a worker and not yet acknowledged.
    public var inFlight = 0
    /// Firings sent to workers since start, redeliveries included.
    public var dispatched = 0
    /// Firings put back in line after a lease expired or a worker was lost, since start.
    public var redelivered = 0
    /// Firings acknowledged since start.
    public var acknowledged = 0
    /// Firings that exhausted their attempts since start.
    public var deadLettered = 0
    /// Occurrences a recipient's settings let nothing of through, since start.
    public var suppressed = 0
    /// Dead letters held now (not yet retried).
    public var deadLetters = 0
    /// Firings held now in their recipient's quiet hours.
    public var heldFirings = 0
    /// `firedAt − dueAt` of acknowledged firings, in seconds.
    public var fireLateness = Histogram(upperBounds: Histogram.latencySecondsBounds)
    /// Workers heard from within the liveness window.
    public var workersAlive = 0
    /// This coordinator's epoch.
    public var epoch: UInt64 = 0
    /// Control requests answered since start, by operation and code.
    public var requests: [RequestKey: Int] = [:]
    /// From reading a control request to deciding its reply, in seconds, by operation (the
    /// `op` of `chime_requests_total`).
    public var requestDurations: [String: Histogram] = [:]
    /// How long each loop turn took, poll wait excluded, in seconds.
    public var turnDuration = Histogram(upperBounds: Histogram.durationSecondsBounds)
    /// The slowest loop turn since start, in seconds.
    public var slowestTurnSeconds = 0.0
    /// Control replies dropped since start because their connection did not read them.
    public var controlRepliesDropped = 0
    /// Control requests not served since start because their connection did not read its replies.
    public var controlRequestsDropped = 0
    /// Control connections not reading their replies now (their requests are not served).
    public var controlConnectionsNotReading = 0
    /// Bytes of control requests read and waiting for their connection's turn now.
    public var controlPendingBytes = 0
    /// Bytes of replies TCP control connections behind may hold, estimated at the last sample.
    public var controlReplyBacklogBytes: UInt64 = 0
    /// Control connections cut off since start for holding the most unread replies past
    /// `limits.controlQueueBytesTotal`.
    public var controlConnectionsDropped = 0
    /// Bytes of batches TCP worker connections behind may hold, estimated at the last sample.
    public var dispatchBacklogBytes: UInt64 = 0
    /// Worker connections cut off since start for holding the most unread batches past
    /// `limits.dispatchQueueBytesTotal`.
    public var dispatchConnectionsDropped = 0
    /// Batches not handed to a worker since start because it held
    /// `limits.dispatchQueueBytesPerConnection` unread (their firings waited for another).
    public var dispatchBatchesHeld = 0
    /// Workers quarantined since start for letting leases run out.
    public var quarantines = 0
    /// Workers quarantined now.
    public var workersQuarantined = 0
    /// Slot moves in progress on this shard: as source (`outgoing`) and target (`incoming`).
    public var slotMoves: (outgoing: Int, incoming: Int) = (0, 0)
    /// Slot moves that ended on this shard since its store began, by how they ended here.
    public var slotMovesEnded: [(ending: String, count: Int)] = []

    /// Adds the coordinator's families.
    public func write(into exposition: inout MetricsExposition) {
        exposition.gauge(
            "chime_reminders", help: "Reminders held, by state.",
            remindersByState.map { ([("state", $0.state)], Double($0.count)) })
        exposition.gauge(
            "chime_due_backlog",
            help: "Occurrences due and not yet handed to a worker (waiting for worker credit, or due in the schedule and not yet fired).",
            value: Double(dueBacklog))
        exposition.gauge(
            "chime_oldest_undelivered_age_seconds",
            help: "Seconds the oldest due and unacknowledged firing or occurrence has waited (0 when none).",
            value: oldestUndeliveredAgeSeconds)
        exposition.gauge("chime_firings_waiting", help: "Fired firings waiting for a worker with credit.", value: Double(waiting))
        exposition.gauge("chime_firings_in_flight", help: "Firings handed to a worker and not yet acknowledged.", value: Double(inFlight))
        exposition.counter(
            "chime_firings_dispatched_total", help: "Firings sent to workers, redeliveries included.", value: Double(dispatched))
        exposition.counter(
            "chime_firings_redelivered_total", help: "Firings put back in line after a lease expired or their worker was lost.",
            value: Double(redelivered))
        exposition.counter("chime_firings_acknowledged_total", help: "Firings acknowledged by a worker.", value: Double(acknowledged))
        exposition.counter(
            "chime_firings_dead_lettered_total", help: "Firings that exhausted their delivery attempts.", value: Double(deadLettered))
        exposition.counter(
            "chime_occurrences_suppressed_total", help: "Occurrences the recipient's settings let nothing of through.",
            value: Double(suppressed))
        exposition.gauge("chime_dead_letters", help: "Dead-lettered firings held (not yet retried).", value: Double(deadLetters))
        exposition.gauge(
            "chime_firings_held", help: "Firings held in their recipient's quiet hours, released when the window ends.",
            value: Double(heldFirings))
        exposition.histogram(
            "chime_fire_lateness_seconds", help:
                "Seconds from a firing's due time (from its scheduling when it was already due then) to its delivery, as the delivering worker measured it.",
            fireLateness)
        exposition.counter(
            "chime_requests_total", help: "Control requests answered, by operation and error code (ok for success).",
            requests.sorted { $0.key < $1.key }.map { ([("op", $0.key.operation), ("code", $0.key.code)], Double($0.value)) })
        exposition.histogram(
            "chime_request_duration_seconds",
            help:
                "Seconds from reading a control request to deciding its reply, by operation (the wait for the journal is chime_journal_fsync_duration_seconds).",
            requestDurations.sorted { $0.key < $1.key }.map { ([("op", $0.key)], $0.value) })
        exposition.histogram(
            "chime_loop_turn_duration_seconds",
            help: "Seconds each coordinator loop turn took (reading requests and results, firing, dispatching; not the poll wait).",
            turnDuration)
        exposition.gauge(
            "chime_loop_turn_max_seconds", help: "The slowest coordinator loop turn since start, in seconds.",
            value: slowestTurnSeconds)
        exposition.counter(
            "chime_control_replies_dropped_total",
            help: "Control replies dropped because their connection's queue (limits.controlQueueBytesPerConnection) was full: it did not read them.",
            value: Double(controlRepliesDropped))
        exposition.counter(
            "chime_control_requests_dropped_total",
            help: "Control requests not served because their connection did not read its replies (dropped unread, or refused rate_limited once it read again) or had limits.controlPendingBytesPerConnection waiting (refused rate_limited).",
            value: Double(controlRequestsDropped))
        exposition.gauge(
            "chime_control_connections_not_reading",
            help: "Control connections whose reply queue was full and that have not read since (their requests are not served).",
            value: Double(controlConnectionsNotReading))
        exposition.gauge(
            "chime_control_reply_backlog_bytes",
            help: "Bytes of replies the TCP control connections that fell behind may hold (those handed to each since it last caught up), estimated every 100 ms while replies flow; limits.controlQueueBytesTotal bounds it.",
            value: Double(controlReplyBacklogBytes))
        exposition.counter(
            "chime_control_connections_dropped_total",
            help: "Control connections cut off (shutdown of their socket), those behind longest first, when the unread replies of all together passed limits.controlQueueBytesTotal.",
            value: Double(controlConnectionsDropped))
        exposition.gauge(
            "chime_dispatch_backlog_bytes",
            help: "Bytes of dispatch batches the TCP worker connections that fell behind may hold (those handed to each since it last caught up), estimated every 100 ms while batches flow; limits.dispatchQueueBytesTotal bounds it.",
            value: Double(dispatchBacklogBytes))
        exposition.counter(
            "chime_dispatch_connections_dropped_total",
            help: "Worker connections cut off (shutdown of their socket), those behind longest first, when the unread batches of all together passed limits.dispatchQueueBytesTotal.",
            value: Double(dispatchConnectionsDropped))
        exposition.counter(
            "chime_dispatch_batches_held_total",
            help: "Batches not handed to a worker because it left limits.dispatchQueueBytesPerConnection unread; their firings waited for a worker that reads.",
            value: Double(dispatchBatchesHeld))
        exposition.gauge(
            "chime_control_pending_bytes",
            help: "Bytes of control requests read and waiting for their connection's turn (served round-robin across connections).",
            value: Double(controlPendingBytes))
        exposition.counter(
            "chime_worker_quarantines_total", help: "Workers set aside (no firings for a back-off period) for letting leases run out.",
            value: Double(quarantines))
        exposition.gauge("chime_workers_quarantined", help: "Workers quarantined now.", value: Double(workersQuarantined))
        exposition.gauge("chime_workers_alive", help: "Workers heard from within the liveness window.", value: Double(workersAlive))
        exposition.gauge("chime_epoch", help: "The coordinator epoch (one more at each start on the store).", value: Double(epoch))
        exposition.gauge(
            "chime_slot_moves_in_progress", help: "Slot moves this shard takes part in, by role (source or target).",
            [([("role", "source")], Double(slotMoves.outgoing)), ([("role", "target")], Double(slotMoves.incoming))])
        exposition.counter(
            "chime_slot_moves_ended_total", help: "Slot moves that ended on this shard, by how (released, completed, resumed, dropped).",
            slotMovesEnded.map { ([("ending", $0.ending)], Double($0.count)) })
    }
}

extension CoordinatorState {
    /// The figures of `/metrics` at `now` (the service adds the request counters). Counts
    /// reminders by state as `status` does (a firing held ahead of its due instant leaves its
    /// reminder `pending`) and scans the unsettled firings: O(unsettled), for scrapes only.
    func metrics(at now: Date) -> CoordinatorMetrics {
        var metrics = CoordinatorMetrics()
        let counts = reportedStateCounts(at: now)
        metrics.remindersByState = ReminderState.allCases.map { ($0.rawValue, counts[$0] ?? 0) }
        let backlog = backlog(at: now)
        metrics.dueBacklog = backlog.due
        metrics.oldestUndeliveredAgeSeconds = backlog.oldestAgeSeconds
        metrics.waiting = dispatch.waiting.count
        metrics.inFlight = dispatch.inFlight.count
        metrics.dispatched = counters.dispatched
        metrics.redelivered = counters.redelivered
        metrics.acknowledged = counters.acknowledged
        metrics.deadLettered = counters.deadLettered
        metrics.suppressed = counters.suppressed
        metrics.deadLetters = deadLetters.count
        metrics.heldFirings = durable.heldCount
        metrics.fireLateness = counters.fireLatenessSeconds
        metrics.workersAlive = dispatch.workers.values.filter { isAlive($0) }.count
        metrics.quarantines = dispatch.leaseFailures.quarantineCount
        metrics.workersQuarantined = dispatch.leaseFailures.quarantinedCount(at: clocks.elapsed)
        metrics.epoch = identity.epoch
        metrics.slotMoves = (durable.moves.outgoing.count, durable.moves.incoming.count)
        metrics.slotMovesEnded = ["released", "completed", "resumed", "dropped"].map { name in
            (name, durable.moves.ended.values.filter { $0.rawValue == name }.count)
        }
        return metrics
    }

    /// Occurrences due and not handed to a worker (fired and waiting, plus due in the
    /// schedule and not fired), and how long the oldest due, unacknowledged one has waited,
    /// in seconds (0 when none). A firing made ahead of its due instant and still waiting for
    /// a worker is not due yet: it is not counted. O(unsettled).
    func backlog(at now: Date) -> (due: Int, oldestAgeSeconds: Double) {
        let dueInSchedule = schedule.countDue(at: now)
        var oldest = dueInSchedule > 0 ? schedule.nextDeadline : nil
        for shared in unsettled.values where oldest.map({ shared.firing.dueAt < $0 }) ?? true {
            oldest = shared.firing.dueAt
        }
        let age = oldest.map { now.timeIntervalSince($0) } ?? 0
        let waitingDue = dispatch.waiting.reduce(0) { $0 + ($1.firing.dueAt <= now ? 1 : 0) }
        return (waitingDue + dueInSchedule, max(0, age))
    }
}
