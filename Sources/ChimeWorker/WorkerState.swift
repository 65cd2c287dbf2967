import ChimeCore
import ChimeWire
import Foundation

/// What `WorkerState` asks its service to do.
public enum WorkerDirective: Sendable, Hashable {
    /// Publish this event on its topic (after delivery, before the acknowledgement).
    case publish(FireEvent)
    /// Send this heartbeat (with any acknowledgements) on the results socket.
    case report(WorkerMessage)
    /// Send this heartbeat (never with acknowledgements) over the dispatch connection, so the
    /// coordinator knows it can route batches to this worker.
    case announce(WorkerMessage)
    /// Run this action job's handler; report its outcome with `onJobFinished`.
    case run(ActionJob)
    /// Deliver this fire event's firing to these destinations (after publishing the event)
    /// within `budget` seconds; report what became of them with `onDeliveryReport`. The
    /// firing's acknowledgement waits for that report.
    case deliverToDestinations(FireEvent, [Destination], budget: Double)
}

/// A worker's decisions: deliver each firing as a fire event, acknowledge it, heartbeat.
/// Pure: events in, directives out, time passed in.
public struct WorkerState: Sendable {
    /// This worker's id.
    public let id: WorkerID
    let host: String
    let pid: Int32
    /// The heartbeat interval, in seconds.
    public let heartbeatInterval: Double
    /// How many unacknowledged firings this worker accepts at once (announced as credit);
    /// changed by ``changeCapacity(to:)`` when a worker's share of a cluster changes.
    public private(set) var capacity: Int
    var sequence: UInt64 = 0
    /// Firings delivered since start.
    public private(set) var deliveredCount = 0
    var pendingAcks: [WorkerMessage.Acknowledgement] = []
    var pendingOutcomes: [ActionOutcome] = []
    /// When the last heartbeat went out: a monotonic reading in seconds.
    var lastReportAt: Double?
    /// How long acknowledgements may wait to go out together, in seconds (0: at once).
    public var acknowledgementDelay: Double = 0
    /// When the first acknowledgement now waiting was queued: the monotonic reading (seconds)
    /// passed with its delivery, or, without one, the first `onTick` that saw it; `nil` when
    /// none waits.
    var acknowledgementsWaitingSince: Double?
    /// The most acknowledgements that wait: more go out at once.
    static let maximumWaitingAcknowledgements = 256
    /// The highest coordinator epoch a batch came with (0: none yet).
    public private(set) var highestEpoch: UInt64 = 0
    /// The shard whose coordinator this state serves, in a cluster of several shards: its fire
    /// events carry it. `nil`: one coordinator (no `shard` in the events). Epochs are a shard's
    /// own, so a worker serving several shards keeps one state (one `highestEpoch`) per shard.
    public var shard: Int?
    /// Batches dropped because their epoch was below `highestEpoch`.
    public private(set) var staleBatches = 0
    /// Firings handed over ahead of their due instant, delivered by ``onTimer(at:)`` when due:
    /// each with the epoch of its batch, by firing id.
    var held: [FiringID: (firing: Firing, epoch: UInt64, destinations: [Destination]?)] = [:]
    /// Firings delivered as fire events whose destinations have no outcome yet, by firing id:
    /// each acknowledgement goes out with its ``DeliveryReport``.
    var awaitingDestinations: [FiringID: AwaitedDelivery] = [:]
    /// The last firings delivered to every destination: a newer epoch that hands one out again
    /// gets its acknowledgement, not a second request to each destination.
    var deliveredFirings = DeliveredFirings()
    /// Firings a newer epoch handed out again that were not sent to their destinations twice:
    /// still being sent (the report acknowledges them under the newer epoch) or already
    /// delivered to every one (acknowledged at once with the report they had).
    public internal(set) var redeliveriesNotResent = 0
    /// Delivery reports that go out with their acknowledgements in the next report.
    var pendingReports: [DeliveryReport] = []
    /// The share of a batch's lease a firing's destinations may take, before the coordinator
    /// would hand the firing to another worker.
    public static let deliveryBudgetShare = 0.8
    /// When each of `held` comes due (its `dueAt`, UTC).
    var heldTimer = TimerQueue<FiringID>()
    /// Held firings dropped before their due instant because the coordinator revoked them.
    public private(set) var revokedCount = 0

    /// Creates the value from its fields (see each property for meaning and units).
    public init(id: WorkerID, host: String, pid: Int32, heartbeatInterval: Double = 1, capacity: Int = 4096) {
        self.id = id
        self.host = host
        self.pid = pid
        self.heartbeatInterval = heartbeatInterval
        self.capacity = capacity
    }

    /// Delivers a batch: one fire event per firing, stamped `now` and numbered in order.
    /// The acknowledgements go out with the next `onTick`.
    ///
    /// A firing whose `dueAt` is after `now` (handed over ahead of time) is held instead and
    /// delivered by ``onTimer(at:)`` at its due instant; the batch's `revoked` firings still
    /// held are dropped (one already delivered is acknowledged as usual). A batch of a higher
    /// epoch drops what the earlier epoch handed over: the new coordinator hands out every
    /// unsettled firing again (same firing id), and only it can revoke them.
    ///
    /// `monotonic` (seconds, the clock `onTick(monotonic:)` reads) is when the delivery
    /// happens: the acknowledgement delay counts from it. `nil`: from the next `onTick`.
    ///
    /// A batch from an epoch below the highest this worker has seen comes from a coordinator
    /// that lost the store (a paused one that resumed on another host): it is dropped
    /// unseen (`staleBatches`), as a fencing token is checked where the stale write would
    /// land (Kleppmann, "How to do distributed locking"); the current coordinator delivers
    /// those firings itself.
    public mutating func onBatch(_ batch: DispatchBatch, at now: Date, monotonic: Double? = nil) -> [WorkerDirective] {
        guard batch.epoch >= highestEpoch else {
            staleBatches += 1
            return []
        }
        if batch.epoch > highestEpoch && !held.isEmpty {
            for (id, entry) in held where entry.epoch < batch.epoch { drop(id) }
        }
        highestEpoch = batch.epoch
        for id in batch.revoked ?? [] where held[id] != nil {
            drop(id)
            revokedCount += 1
        }
        var directives: [WorkerDirective] = (batch.jobs ?? []).map { .run($0) }
        directives.reserveCapacity(batch.firings.count + directives.count)
        deliveryBudget = Double(max(0, batch.leaseMilliseconds)) / 1000 * Self.deliveryBudgetShare
        for firing in batch.firings {
            let destinations = batch.firingDestinations?[firing.firingId.description] ?? batch.destinations?[firing.recipient.rawValue]
            if firing.dueAt > now {
                held[firing.firingId] = (firing, batch.epoch, destinations)
                heldTimer.schedule(firing.firingId, at: firing.dueAt)
                continue
            }
            deliver(firing, epoch: batch.epoch, at: now, monotonic: monotonic, destinations: destinations, into: &directives)
        }
        return directives
    }

    /// Delivers the held firings due at `now` (UTC), earliest first, stamped `now`;
    /// `monotonic` as in ``onBatch(_:at:monotonic:)``.
    public mutating func onTimer(at now: Date, monotonic: Double? = nil) -> [WorkerDirective] {
        var directives: [WorkerDirective] = []
        while let (id, dueAt) = heldTimer.first, dueAt <= now {
            _ = heldTimer.remove(id)
            guard let entry = held.removeValue(forKey: id) else { continue }
            deliver(entry.firing, epoch: entry.epoch, at: now, monotonic: monotonic, destinations: entry.destinations, into: &directives)
        }
        return directives
    }

    /// The due instant of the earliest held firing (UTC), if any: the service's timer.
    public var nextHeldDue: Date? { heldTimer.nextDeadline }

    /// How many firings are held for their due instant.
    public var heldCount: Int { held.count }

    /// Firings this worker holds that the coordinator still counts against its capacity:
    /// held for their due instant, awaiting their destinations' outcomes, or delivered with
    /// the acknowledgement not sent yet.
    public var unacknowledgedCount: Int { held.count + awaitingDestinations.count + pendingAcks.count }

    mutating func drop(_ id: FiringID) {
        held[id] = nil
        _ = heldTimer.remove(id)
    }

    /// One fire event for `firing`, stamped `now`, and its acknowledgement for the next report
    /// (the first one waiting starts the acknowledgement delay at `monotonic`, when given).
    mutating func deliver(
        _ firing: Firing, epoch: UInt64, at now: Date, monotonic: Double?, destinations: [Destination]? = nil,
        into directives: inout [WorkerDirective]
    ) {
        sequence += 1
        deliveredCount += 1
        // The coordinator numbers events; a local count only stands in for a firing without one.
        let seq = firing.seq ?? sequence
        var event = FireEvent(seq: seq, publisher: id, firing: firing, firedAt: now)
        event.shard = shard
        directives.append(.publish(event))
        let acknowledgement = WorkerMessage.Acknowledgement(firingId: firing.firingId, firedAt: now, attempt: firing.attempt, epoch: epoch)
        if let destinations, !destinations.isEmpty {
            let keys = Set(destinations.map(\.key))
            if answerRedelivery(acknowledgement, to: keys, monotonic: monotonic) { return }
            awaitingDestinations[firing.firingId] = AwaitedDelivery(acknowledgement: acknowledgement, destinationKeys: keys)
            directives.append(.deliverToDestinations(event, destinations, budget: deliveryBudget))
            return
        }
        if pendingAcks.isEmpty, acknowledgementsWaitingSince == nil { acknowledgementsWaitingSince = monotonic }
        pendingAcks.append(acknowledgement)
    }

    /// The seconds a firing's destinations may take: ``deliveryBudgetShare`` of the lease of
    /// the last batch (10 s until one came).
    var deliveryBudget = 10 * Self.deliveryBudgetShare

    /// Queues the acknowledgement of a firing whose destinations all have an outcome, with
    /// `report`, for the next report (`monotonic` as in ``onBatch(_:at:monotonic:)``). A
    /// report for a firing not awaited (handed back, or a duplicate) is dropped.
    public mutating func onDeliveryReport(_ report: DeliveryReport, monotonic: Double? = nil) {
        guard let awaited = awaitingDestinations.removeValue(forKey: report.firingId) else { return }
        if !report.hasFailure {
            deliveredFirings.remember(report, epoch: awaited.acknowledgement.epoch, destinationKeys: awaited.destinationKeys)
        }
        if pendingAcks.isEmpty, acknowledgementsWaitingSince == nil { acknowledgementsWaitingSince = monotonic }
        pendingAcks.append(awaited.acknowledgement)
        pendingReports.append(report)
    }

    /// Firings delivered as fire events whose destinations have no outcome yet.
    public var awaitingDestinationsCount: Int { awaitingDestinations.count }

    /// Sends pending acknowledgements (once the first has waited `acknowledgementDelay`, or
    /// 256 wait), or a bare heartbeat when one is due.
    /// - Parameter monotonic: seconds on a clock that never steps (CLOCK_MONOTONIC): the
    ///   heartbeat interval is measured on it, so a wall-clock step back does not silence the
    ///   worker until the coordinator drops it.
    public mutating func onTick(monotonic now: Double) -> [WorkerDirective] {
        let heartbeatDue = lastReportAt.map { now - $0 >= heartbeatInterval } ?? true
        var acknowledgementsDue = !pendingAcks.isEmpty
        if acknowledgementsDue && acknowledgementDelay > 0 && pendingAcks.count < Self.maximumWaitingAcknowledgements {
            let since = acknowledgementsWaitingSince ?? now
            acknowledgementsWaitingSince = since
            acknowledgementsDue = now - since >= acknowledgementDelay
        }
        guard acknowledgementsDue || !pendingOutcomes.isEmpty || heartbeatDue else { return [] }
        acknowledgementsWaitingSince = nil
        var message = WorkerMessage(
            worker: id, host: host, pid: pid, capacity: capacity, delivered: deliveredCount, acks: pendingAcks)
        message.outcomes = pendingOutcomes.isEmpty ? nil : pendingOutcomes
        message.deliveries = pendingReports.isEmpty ? nil : pendingReports
        pendingAcks.removeAll(keepingCapacity: true)
        pendingOutcomes.removeAll()
        pendingReports.removeAll()
        guard heartbeatDue else { return [.report(message)] }
        lastReportAt = now
        var announcement = message
        announcement.acks = []
        announcement.outcomes = nil
        announcement.deliveries = nil
        return [.announce(announcement), .report(message)]
    }

    /// The last message of a stopping worker: the acknowledgements and outcomes not yet sent,
    /// capacity 0 and `leaving`, so the coordinator hands what this worker still holds to
    /// another one at once (ZeroMQ Guide ch. 4, "Paranoid Pirate": a worker that leaves says
    /// so instead of letting its heartbeats run out). Firings held for their due instant are
    /// dropped unacknowledged: the coordinator hands them to another worker.
    public mutating func leave() -> WorkerMessage {
        held.removeAll()
        heldTimer = TimerQueue()
        var message = WorkerMessage(worker: id, host: host, pid: pid, capacity: 0, delivered: deliveredCount, acks: pendingAcks)
        message.outcomes = pendingOutcomes.isEmpty ? nil : pendingOutcomes
        message.deliveries = pendingReports.isEmpty ? nil : pendingReports
        message.leaving = true
        pendingAcks.removeAll()
        pendingOutcomes.removeAll()
        pendingReports.removeAll()
        // Firings whose destinations have no outcome yet go unacknowledged: the coordinator
        // hands them to another worker, which delivers them again under the same firing id.
        awaitingDestinations.removeAll()
        return message
    }

    /// Sets the capacity announced from now on (a worker serving several shards gives each its
    /// share, which changes when shards join or leave the map) and announces it at the next
    /// `onTick`. Firings already held above a lowered capacity are delivered as usual; the
    /// coordinator sends no more until the worker is below it.
    public mutating func changeCapacity(to newCapacity: Int) {
        guard newCapacity != capacity else { return }
        capacity = newCapacity
        announceAtNextTick()
    }

    /// Makes the next `onTick` send a heartbeat with an announcement, whenever the last was.
    public mutating func announceAtNextTick() {
        lastReportAt = nil
    }

    /// Puts back acknowledgements the service could not send (results socket full).
    public mutating func onReportNotSent(_ message: WorkerMessage) {
        pendingAcks.insert(contentsOf: message.acks, at: 0)
        pendingOutcomes.insert(contentsOf: message.outcomes ?? [], at: 0)
        pendingReports.insert(contentsOf: message.deliveries ?? [], at: 0)
    }

    /// Queues a finished action job's outcome for the next report.
    public mutating func onJobFinished(_ outcome: ActionOutcome) {
        pendingOutcomes.append(outcome)
    }

    /// When the next heartbeat or waiting acknowledgements are due, on the monotonic clock
    /// `onTick(monotonic:)` reads (seconds).
    public var nextWake: Double? {
        let heartbeat = lastReportAt.map { $0 + heartbeatInterval }
        guard let since = acknowledgementsWaitingSince else { return heartbeat }
        return min(heartbeat ?? .infinity, since + acknowledgementDelay)
    }
}
