import ChimeCore
import ChimeStore
import ChimeWire
import Foundation

/// The coordinator's decisions: the schedule, in-flight firings with their leases, and
/// the workers it has heard from. Pure: events in, directives out, time passed in.
///
/// Invariants: every enabled reminder with an occurrence left is armed in `schedule` at
/// that occurrence; every in-flight firing that was handed to the dispatch socket has a
/// lease in `leases`. Redelivery after a lease expires reuses the firing id
/// (at-least-once delivery with an idempotency key).
public struct CoordinatorState: Sendable {
    struct Entry: Sendable {
        var reminder: Reminder
        var recurrence: Recurrence
        var next: Occurrence?
        var state: ReminderState
        var deliveredCount = 0
        var lastFiredAt: Date?
    }

    struct InFlight: Sendable {
        var firing: Firing
        var leaseExpiresAt: Date?
    }

    struct WorkerRecord: Sendable {
        var host: String
        var pid: Int32
        var lastSeenAt: Date
        var acknowledged = 0
        var delivered = 0
    }

    public let configuration: CoordinatorConfiguration
    let startedAt: Date
    var entries: [ReminderID: Entry] = [:]
    var schedule = TimerQueue<ReminderID>()
    var inFlight: [FiringID: InFlight] = [:]
    var leases = TimerQueue<FiringID>()
    var workers: [WorkerID: WorkerRecord] = [:]
    var deadLetters: [FiringID: Firing] = [:]
    var recentReplies: [String: ControlOutcome] = [:]
    var recentRequestOrder: [String] = []
    var generatedIDs = 0
    var dispatchLateness = LatenessRecorder()
    var fireLateness = LatenessRecorder()
    var dispatchedCount = 0
    var redeliveredCount = 0
    var acknowledgedCount = 0

    /// Makes an empty coordinator state.
    /// - Parameters:
    ///   - configuration: the tunables.
    ///   - startedAt: when the coordinator started (UTC), for `status`.
    public init(configuration: CoordinatorConfiguration = CoordinatorConfiguration(), startedAt: Date) {
        self.configuration = configuration
        self.startedAt = startedAt
    }

    /// How many reminders the state holds, in any state.
    public var reminderCount: Int { entries.count }

    /// How many firings are dispatched and unacknowledged.
    public var inFlightCount: Int { inFlight.count }

    /// The earliest instant at which `onTick` has something to do (UTC), if any.
    public var nextWake: Date? {
        switch (schedule.nextDeadline, leases.nextDeadline) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b?): return b
        case (nil, nil): return nil
        }
    }

    /// Fires what is due and redelivers what has outlived its lease.
    ///
    /// A repeating reminder whose next occurrence is already past (the coordinator was
    /// stalled) fires once and continues from the first occurrence after `now`, never
    /// re-anchored to the late time.
    /// - Returns: `.append(.dispatched)` entries followed by `.dispatch` batches of at most
    ///   `maxBatchSize` firings.
    public mutating func onTick(now: Date) -> [CoordinatorDirective] {
        var due: [Firing] = []
        for (id, _) in schedule.popDue(at: now) {
            guard var entry = entries[id], let occurrence = entry.next else { continue }
            var firing = Firing(
                reminderId: id, recipient: entry.reminder.recipient, dueAt: occurrence.instant,
                content: entry.reminder.content)
            if let previous = inFlight[firing.firingId] {
                // Same occurrence still in flight (scheduled again with an identical trigger):
                // its lease already guarantees delivery.
                firing = previous.firing
            } else {
                inFlight[firing.firingId] = InFlight(firing: firing, leaseExpiresAt: nil)
                due.append(firing)
            }
            entry.next = Self.occurrence(after: occurrence, in: entry.recurrence, notBefore: now)
            if let next = entry.next {
                schedule.schedule(id, at: next.instant)
            } else {
                entry.state = entry.reminder.trigger.isRepeating ? .finished : .delivered
            }
            entries[id] = entry
            dispatchLateness.record(milliseconds: now.timeIntervalSince(occurrence.instant) * 1000)
        }
        for (firingId, _) in leases.popDue(at: now) {
            guard var flight = inFlight[firingId] else { continue }
            if flight.firing.attempt >= configuration.maxAttempts {
                inFlight[firingId] = nil
                deadLetters[firingId] = flight.firing
                continue
            }
            flight.firing.attempt += 1
            flight.leaseExpiresAt = nil
            inFlight[firingId] = flight
            redeliveredCount += 1
            due.append(flight.firing)
        }
        guard !due.isEmpty else { return [] }
        var directives = due.map { CoordinatorDirective.append(.dispatched($0.firingId, attempt: $0.attempt, at: now)) }
        var start = 0
        while start < due.count {
            let end = min(start + configuration.maxBatchSize, due.count)
            directives.append(.dispatch(DispatchBatch(
                epoch: configuration.epoch,
                leaseMilliseconds: Int(configuration.leaseDuration * 1000),
                firings: Array(due[start..<end]))))
            start = end
        }
        dispatchedCount += due.count
        return directives
    }

    /// Starts the leases of a batch the service has handed to the dispatch socket.
    public mutating func onBatchSent(_ batch: DispatchBatch, at now: Date) {
        let expiry = now.addingTimeInterval(configuration.leaseDuration)
        for firing in batch.firings {
            guard inFlight[firing.firingId] != nil else { continue }
            inFlight[firing.firingId]?.leaseExpiresAt = expiry
            leases.schedule(firing.firingId, at: expiry)
        }
    }

    /// Records a worker's heartbeat and its acknowledgements.
    ///
    /// An acknowledgement from another epoch is fenced off (ignored); one for a firing no
    /// longer in flight is a duplicate delivery and changes nothing.
    /// - Returns: `.append(.acknowledged)` for each firing this message completed.
    public mutating func onWorkerMessage(_ message: WorkerMessage, at now: Date) -> [CoordinatorDirective] {
        var record = workers[message.worker] ?? WorkerRecord(host: message.host, pid: message.pid, lastSeenAt: now)
        record.host = message.host
        record.pid = message.pid
        record.lastSeenAt = now
        record.delivered = message.delivered
        var directives: [CoordinatorDirective] = []
        for ack in message.acks where ack.epoch == configuration.epoch {
            guard let flight = inFlight.removeValue(forKey: ack.firingId) else { continue }
            leases.remove(ack.firingId)
            record.acknowledged += 1
            acknowledgedCount += 1
            fireLateness.record(milliseconds: ack.firedAt.timeIntervalSince(flight.firing.dueAt) * 1000)
            if var entry = entries[flight.firing.reminderId] {
                entry.deliveredCount += 1
                entry.lastFiredAt = max(entry.lastFiredAt ?? ack.firedAt, ack.firedAt)
                entries[flight.firing.reminderId] = entry
            }
            directives.append(.append(.acknowledged(ack.firingId, firedAt: ack.firedAt)))
        }
        workers[message.worker] = record
        return directives
    }

    /// The first occurrence after `occurrence` that is not before `notBefore`; missed ones
    /// in between are coalesced into the firing being made now.
    static func occurrence(after occurrence: Occurrence, in recurrence: Recurrence, notBefore: Date) -> Occurrence? {
        guard let next = recurrence.nextOccurrence(after: occurrence) else { return nil }
        if next.instant > notBefore { return next }
        guard let upcoming = recurrence.firstOccurrence(onOrAfter: notBefore, fromIndex: next.index) else {
            return nil
        }
        if upcoming.instant == notBefore { return recurrence.nextOccurrence(after: upcoming) }
        return upcoming
    }

    func isAlive(_ worker: WorkerRecord, at now: Date) -> Bool {
        now.timeIntervalSince(worker.lastSeenAt)
            <= configuration.heartbeatInterval * Double(configuration.heartbeatLiveness)
    }
}
