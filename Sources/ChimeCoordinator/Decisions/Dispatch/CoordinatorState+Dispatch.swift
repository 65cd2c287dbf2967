import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

extension CoordinatorState {
    /// Fires what is due, drops workers that missed their heartbeats (their firings are
    /// redelivered at once), redelivers firings whose lease expired, and assigns waiting
    /// firings to live workers with free capacity.
    ///
    /// A repeating reminder whose next occurrence is already past (the coordinator was
    /// stalled) fires once and continues from the first occurrence after `now`, never
    /// re-anchored to the late time. ZeroMQ Guide ch. 4, "Paranoid Pirate" (liveness).
    /// - Returns: per batch, `.append(.dispatched)` for each firing, then `.dispatch(batch, to:)`.
    ///
    /// Firings are made only as fast as workers can take them: at most the workers' free
    /// credit plus one batch waits at a time, so in a burst the first batch leaves within a
    /// millisecond instead of after every due firing has been made.
    ///
    /// - Parameters:
    ///   - now: the wall clock (UTC): what is due.
    ///   - monotonic: a monotonic reading in seconds (CLOCK_MONOTONIC) for leases and
    ///     liveness; `nil` measures them on `now`.
    public mutating func onTick(now: Date, monotonic: Double? = nil) -> [CoordinatorDirective] {
        observeClocks(now, monotonic: monotonic)
        counters.throughput.sampleIfDue(elapsed: clocks.elapsed, dispatched: counters.dispatched, acknowledged: counters.acknowledged)
        var directives: [CoordinatorDirective] = []
        if shardView.isMoveFollowDue { followMapRecord(at: now, directives: &directives) }
        fireDue(at: now, budget: max(0, freeCredit().saturatingAdding(configuration.maxBatchSize) - waitingCount),
                directives: &directives)
        releaseDueNags(at: now, directives: &directives)
        releaseDueHolds(at: now, directives: &directives)
        dropSilentWorkers(at: now, directives: &directives)
        // Stale entries (acknowledged, requeued or leased again) leave from the front at once,
        // not at their expiry: in a burst the FIFO otherwise held every firing of the last lease
        // period (100,000 entries at W1 100k) rather than about the in-flight window.
        while let lease = dispatch.leases.first {
            let firingId = lease.firingId
            let isCurrent = dispatch.inFlight[firingId]?.leaseExpiresAt == lease.expiresAt
            if isCurrent && lease.expiresAt > clocks.elapsed { break }
            _ = dispatch.leases.popFirst()
            guard isCurrent, let flight = dispatch.inFlight.removeValue(forKey: firingId) else { continue }
            dispatch.workers[flight.worker]?.outstanding -= 1
            if let seconds = dispatch.leaseFailures.noteExpired(firingId, heldBy: flight.worker, at: clocks.elapsed) {
                note(.workerQuarantined(flight.worker, seconds: seconds))
            }
            requeue(firingId, at: now, directives: &directives)
        }
        assignJobs(at: now, directives: &directives)
        assignWaiting(at: now, directives: &directives)
        continueBulkCancel(at: now, directives: &directives)
        // Firings still waiting means no worker has credit left; credit comes back with a
        // worker message, which wakes the loop.
        dispatch.isScheduleBacklogged = waitingCount > 0
            && (schedule.nextDeadline.map { $0 <= now.addingTimeInterval(configuration.dispatchLead) } ?? false)
        return directives
    }

    /// Takes up to `budget` occurrences due by `now` plus the dispatch lead, earliest first
    /// (those not yet due go to a worker that holds them until their due instant). The timer
    /// is only read here: each
    /// occurrence's entry (`.fired`, `.skipped`, `.suppressed`) moves its reminder on in the
    /// fold, which re-arms it at its next occurrence or disarms it (a `fireAll` catch-up's next
    /// missed occurrence may then come up again in the same turn, within the budget).
    mutating func fireDue(at now: Date, budget: Int, directives: inout [CoordinatorDirective]) {
        if isServingRestricted {
            fireDueAroundUnservedSlots(at: now, budget: budget, directives: &directives)
            return
        }
        var taken = 0
        // Occurrences due within the lead are taken now and handed over ahead of time.
        let horizon = now.addingTimeInterval(configuration.dispatchLead)
        while taken < budget, let (id, deadline) = schedule.first, deadline <= horizon {
            guard let entry = entries[id], let occurrence = entry.next else {
                assertionFailure("reminder \(id) is armed without an entry or a next occurrence")
                break
            }
            takeOccurrence(occurrence, of: id, reminder: entry.reminder, at: now, directives: &directives)
            taken += 1
        }
    }

    /// Decides what becomes of one due occurrence — a firing, a suppression (the recipient's
    /// settings allow nothing) or a skip (a misfire its policy or threshold drops) — and where
    /// the reminder goes next, and records that as one entry.
    ///
    /// A missed occurrence (due before recovery finished) under `fireAll` moves on to the very
    /// next occurrence, up to `fireAllCap` late firings; otherwise the reminder continues from
    /// the first occurrence after `now`, and the missed occurrences coalesce into one firing
    /// of the newest of them: its instant is the firing's `dueAt`, the misfire threshold is
    /// judged on it, and `missed` counts them (Quartz's "fire once now" with the most recent
    /// trigger time).
    mutating func takeOccurrence(
        _ oldest: Occurrence, of id: ReminderKey, reminder: Reminder, at now: Date,
        directives: inout [CoordinatorDirective]
    ) {
        let trigger = reminder.trigger
        let isMisfire = clocks.recoveredAt.map { reminder.fireInstant(eventInstant: oldest.instant) < $0 } ?? false
        let policy = trigger.misfire ?? .fireOnce
        // A one-shot has no next occurrence; only repeating reminders need their sequence.
        let sequence = trigger.isRepeating ? recurrence(of: reminder) : nil
        let next: Occurrence?
        var occurrence = oldest
        var missed = isMisfire ? 1 : 0
        if isMisfire && policy == .fireAll && lateFirings[id, default: 0] < configuration.fireAllCap {
            next = sequence?.nextOccurrence(after: oldest)
        } else {
            // With spread, an event up to a spread before now may still fire at or after now.
            let notBefore = trigger.earliestEvent(firingOnOrAfter: now)
            next = sequence.flatMap { Self.occurrence(after: oldest, in: $0, notBefore: notBefore) }
            if isMisfire, let sequence {
                (occurrence, missed) = Self.newestMissed(from: oldest, before: next, in: sequence, notAfter: notBefore)
            }
        }
        let fireAt = reminder.fireInstant(eventInstant: occurrence.instant)
        // An operator's remaining count of one makes this occurrence the last (`remaining`).
        let following = durable.triggers.remaining.isEmpty || durable.triggers.remaining[id] != 1 ? next : nil
        if isMisfire && !shouldFireMissed(fireAt, of: reminder, policy: policy, at: now) {
            record(.skipped(id, dueAt: fireAt, next: following, at: now), into: &directives)
            return
        }
        switch deliveryPlan(reminder.content, for: reminder.recipient) {
        case .suppressed(let reason):
            record(.suppressed(id, dueAt: fireAt, next: following, reason: reason, at: now), into: &directives)
        case .deliver(let content, _):
            if content.unhandled == .skip && durable.hasUnhandled(reminder) {
                record(.suppressed(id, dueAt: fireAt, next: following, reason: UnhandledPolicy.skipReason, at: now), into: &directives)
                return
            }
            // Passive and active firings due in the recipient's quiet hours wait for their end,
            // those of a recipient with summaries for the next one, and those over its throttle
            // for the slot it gives them; the last rule that moved the release is the reason.
            let planned = max(fireAt, now)
            let quiet = quietRelease(of: content, for: reminder.recipient, at: planned)
            var release = quiet.map { ($0, HoldReason.quietHours) }
            if let summary = durable.summaryRelease(of: content, for: reminder.recipient, at: quiet ?? planned), summary > planned {
                release = (summary, quiet == nil ? .summary : .quietHoursThenSummary)
            }
            if let slot = durable.throttleSlot(of: content, for: reminder.recipient, planned: release?.0 ?? planned), slot > release?.0 ?? planned {
                release = (slot, .throttle)
            }
            if let (until, reason) = release {
                // Over the throttle, the reminder may coalesce into its firing already waiting
                // for the throttle, or drop the occurrence: journaled as suppressed, never lost
                // silently.
                if reason == .throttle, content.throttled != .hold {
                    let waiting = content.throttled == .coalesce ? durable.throttleHeldFiring(of: id) : nil
                    if content.throttled == .drop || waiting != nil {
                        let why = waiting.map(ThrottledPolicy.coalescedReason(into:)) ?? ThrottledPolicy.dropReason
                        record(.suppressed(id, dueAt: fireAt, next: following, reason: why, at: now), into: &directives)
                        return
                    }
                }
                let held = AttentionEntry.held(
                    id, dueAt: fireAt, next: following, late: isMisfire, missed: missed, until: until, reason: reason, at: now)
                record(.attention(held), into: &directives, hints: ApplyHints(reminder: reminder))
                return
            }
            // The fold builds the firing (one place, for live and replay); a firing recovered
            // unsettled for this very occurrence is already in line.
            let entry = JournalEntry.fired(id, dueAt: fireAt, next: following, late: isMisfire, missed: missed, at: now)
            if let made = record(entry, into: &directives, hints: ApplyHints(reminder: reminder)).made {
                dispatch.waiting.append(made)
            }
        }
    }

    /// Whether a missed occurrence fires late under the reminder's misfire policy and threshold.
    func shouldFireMissed(_ fireAt: Date, of reminder: Reminder, policy: MisfirePolicy, at now: Date) -> Bool {
        if policy == .skip { return false }
        if policy == .fireAll && lateFirings[reminder.key, default: 0] >= configuration.fireAllCap { return false }
        if let threshold = reminder.trigger.misfireThreshold ?? configuration.misfireThreshold,
            now.timeIntervalSince(fireAt) > threshold
        {
            return false
        }
        return true
    }

    /// Puts a firing whose worker let it go back in the waiting line for another attempt, or
    /// dead-letters it after `maxAttempts`.
    mutating func requeue(_ firingId: FiringID, at now: Date, directives: inout [CoordinatorDirective]) {
        guard let firing = unsettled[firingId]?.firing else { return }
        if firing.attempt >= configuration.maxAttempts {
            dispatch.leaseFailures.forget(firingId)
            counters.latenessOrigins.forget(firingId)
            record(.deadLettered(firingId, at: now), into: &directives)
            counters.deadLettered += 1
            return
        }
        record(.leaseExpired(firingId, at: now), into: &directives)
        counters.redelivered += 1
        if let shared = unsettled[firingId] { dispatch.waiting.append(shared) }
    }

    mutating func dropSilentWorkers(at now: Date, directives: inout [CoordinatorDirective]) {
        // Lost workers stay listed for a while; then their records go, so ids that come and
        // go (or forged heartbeats) do not accumulate.
        let forgetBefore = clocks.elapsed - (livenessWindow + configuration.deadWorkerRetention)
        for (id, worker) in dispatch.workers where !worker.isAlive && worker.lastSeenElapsed < forgetBefore
            && !dispatch.inFlight.values.contains(where: { $0.worker == id })
        {
            dispatch.workers[id] = nil
            dispatch.leaseFailures.forget(worker: id)
        }
        for (id, worker) in dispatch.workers where worker.isAlive && !isAlive(worker) {
            let held = takeBackFirings(heldBy: id, at: now, directives: &directives)
            note(.workerLost(
                id, host: worker.host, pid: worker.pid, silentSeconds: clocks.elapsed - worker.lastSeenElapsed, leases: held.count,
                firings: Array(held.prefix(CoordinatorNotice.maximumListedFirings))))
        }
    }

    /// Hands waiting firings to live workers, in batches of at most `maxBatchSize`, each
    /// time to the worker with the most free capacity (ties: the one that waited longest).
    /// Each delivery attempt gets the next event `seq`; seqs are reserved in the journal
    /// ahead of use (`.seqReserved`), half a block early, so a recovery never reuses one.
    mutating func assignWaiting(at now: Date, directives: inout [CoordinatorDirective]) {
        while let front = dispatch.waiting.first {
            // A redelivery goes to another live worker than the one that let its lease run out,
            // when there is one (it may have to wait for that worker's credit).
            let avoided = dispatch.leaseFailures.workerToAvoid(for: front.firing.firingId).flatMap { isDispatchable($0) ? $0 : nil }
            let hasOther = avoided.map { hasDispatchableWorker(other: $0) } ?? false
            guard let (workerID, free) = workerWithMostCredit(excluding: hasOther ? avoided : nil) else { break }
            let count = min(free, configuration.maxBatchSize)
            var firings: [Firing] = []
            firings.reserveCapacity(min(count, dispatch.waiting.count))
            while firings.count < count, let next = dispatch.waiting.first {
                // The batch ends before a redelivery that should go elsewhere: it leads the next one.
                if !firings.isEmpty, let avoid = dispatch.leaseFailures.workerToAvoid(for: next.firing.firingId), avoid == workerID,
                    hasDispatchableWorker(other: workerID)
                {
                    break
                }
                guard let shared = dispatch.waiting.popFirst() else { break }
                // Every firing in line is unsettled, current and not in flight: it joins the
                // line when made, requeued (a new box) or handed back, and leaves it only here.
                let firingId = shared.firing.firingId
                dispatch.leaseFailures.forget(firingId)
                assert(unsettled[firingId] === shared && dispatch.inFlight[firingId] == nil, "a stale firing in the waiting line")
                var firing = shared.firing
                // Saturating: the reserved bound comes from the store's bytes.
                if dispatch.nextEventSeq.saturatingAdding(configuration.eventSeqReservation / 2) > eventSeqReserved {
                    record(.seqReserved(through: dispatch.nextEventSeq.saturatingAdding(configuration.eventSeqReservation)), into: &directives)
                }
                firing.seq = dispatch.nextEventSeq
                dispatch.nextEventSeq.saturatingIncrement()
                // A firing handed over ahead of its due instant has its lease from that instant.
                let expiry = clocks.elapsed + max(0, firing.dueAt.timeIntervalSince(now)) + configuration.leaseDuration
                dispatch.inFlight[firingId] = DispatchLine.InFlight(
                    shared: shared, seq: dispatch.nextEventSeq - 1, worker: workerID, leaseExpiresAt: expiry, dispatchedAt: clocks.elapsed)
                dispatch.leases.append((firingId, expiry))
                if firing.attempt == 1 {
                    // Ahead of time counts as on time.
                    let origin = counters.latenessOrigins.origin(of: firingId, dueAt: firing.dueAt)
                    counters.dispatchLateness.record(milliseconds: max(0, now.timeIntervalSince(origin)) * 1000)
                }
                firings.append(localized(firing))
            }
            guard !firings.isEmpty else { continue }
            dispatch.assignmentCounter += 1
            dispatch.workers[workerID]?.outstanding += firings.count
            dispatch.workers[workerID]?.lastAssignment = dispatch.assignmentCounter
            counters.dispatched += firings.count
            var batch = DispatchBatch(
                epoch: identity.epoch, leaseMilliseconds: Int(configuration.leaseDuration * 1000),
                firings: firings, destinations: destinations(of: firings))
            batch.firingDestinations = firingDestinations(of: firings)
            directives.append(.dispatch(batch, to: workerID))
        }
    }

    /// Firings the live, reachable workers can take now: the sum of their free credit
    /// (quarantined workers take none while a healthy one is there).
    func freeCredit() -> Int {
        var free = 0
        let quarantineApplies = hasHealthyWorker()
        for (id, worker) in dispatch.workers where worker.isReachable && isAlive(worker)
            && !(quarantineApplies && dispatch.leaseFailures.isQuarantined(id, at: clocks.elapsed))
        {
            // Saturating: capacities are bounded on receipt, but a sum must never trap.
            free = free.saturatingAdding(max(0, worker.capacity - worker.outstanding))
        }
        return free
    }

    /// Whether a live, reachable worker is not quarantined: quarantine sets a failing worker
    /// aside in favour of such a one, and means nothing when every worker is failing.
    func hasHealthyWorker() -> Bool {
        dispatch.workers.contains { $0.value.isReachable && isAlive($0.value) && !dispatch.leaseFailures.isQuarantined($0.key, at: clocks.elapsed) }
    }

    /// Whether `worker` may get firings now: live, reachable, not quarantined.
    func isDispatchable(_ worker: WorkerID) -> Bool {
        guard let record = dispatch.workers[worker] else { return false }
        return record.isReachable && isAlive(record) && !dispatch.leaseFailures.isQuarantined(worker, at: clocks.elapsed)
    }

    /// Whether a worker other than `worker` may get firings now (credit or not).
    func hasDispatchableWorker(other worker: WorkerID) -> Bool {
        dispatch.workers.keys.contains { $0 != worker && isDispatchable($0) }
    }

    func workerWithMostCredit(excluding excluded: WorkerID? = nil) -> (WorkerID, Int)? {
        var best: (id: WorkerID, free: Int, last: Int)?
        let quarantineApplies = hasHealthyWorker()
        for (id, worker) in dispatch.workers where id != excluded && worker.isReachable && isAlive(worker)
            && !(quarantineApplies && dispatch.leaseFailures.isQuarantined(id, at: clocks.elapsed))
        {
            let free = worker.capacity - worker.outstanding
            guard free > 0 else { continue }
            if let current = best {
                if free < current.free { continue }
                if free == current.free
                    && (worker.lastAssignment, id) > (current.last, current.id) { continue }
            }
            best = (id, free, worker.lastAssignment)
        }
        return best.map { ($0.id, $0.free) }
    }

    /// The service could not hand a batch to its worker (the worker is not connected, or its
    /// queue is full): the worker is treated as gone and the firings wait again, same attempt.
    /// - Parameters: `now` and `monotonic` as for `onTick(now:monotonic:)`.
    public mutating func onDispatchFailed(_ batch: DispatchBatch, to worker: WorkerID, at now: Date, monotonic: Double? = nil) {
        observeClocks(now, monotonic: monotonic)
        dispatch.workers[worker]?.isReachable = false
        // The same attempt goes out again: nothing durable changed.
        for job in batch.jobs ?? [] where jobs[job.jobId]?.outcome == nil { jobLine.handBack(job.jobId) }
        var returned: [SharedFiring] = []
        for firing in batch.firings where dispatch.inFlight[firing.firingId]?.worker == worker {
            if let flight = dispatch.inFlight.removeValue(forKey: firing.firingId) { returned.append(flight.shared) }
        }
        dispatch.workers[worker]?.outstanding -= returned.count
        counters.dispatched -= returned.count
        dispatch.waiting.pushFront(contentsOf: returned)
    }

    /// Records a worker's heartbeat (capacity, counters) and its acknowledgements.
    ///
    /// A worker heard from again after being dropped rejoins. A message that came over the
    /// dispatch connection (`viaDispatch`) proves the coordinator can route batches to it.
    /// An acknowledgement from another epoch is fenced off (ignored); one for a firing no
    /// longer in flight is a duplicate delivery and changes nothing.
    /// - Returns: `.append(.acknowledged)` for each firing this message completed.
    /// - Parameters: `now` and `monotonic` as for `onTick(now:monotonic:)`.
    public mutating func onWorkerMessage(
        _ message: WorkerMessage, viaDispatch: Bool = false, at now: Date, monotonic: Double? = nil
    ) -> [CoordinatorDirective] {
        observeClocks(now, monotonic: monotonic)
        guard dispatch.workers[message.worker] != nil || makeRoomForWorker() else {
            counters.refusedWorkerMessages += 1
            return []
        }
        var record = dispatch.workers[message.worker]
            ?? WorkerRecord(
                host: message.host, pid: message.pid, lastSeenAt: now, lastSeenElapsed: clocks.elapsed, capacity: message.capacity)
        let isNew = dispatch.workers[message.worker] == nil
        // Results a leaving worker sent before its `leaving` (read later: another socket), and
        // its `leaving` said again on dispatch, settle what they acknowledge but do not bring
        // it back.
        let staysGone = record.hasLeft && record.pid == message.pid && (!viaDispatch || message.leaving == true)
        if staysGone {
            record.lastSeenAt = now
            record.lastSeenElapsed = clocks.elapsed
        } else if record.pid != message.pid || !record.isAlive {
            // A restarted or returning worker: whatever it held before was requeued.
            record.outstanding = dispatch.inFlight.values.filter { $0.worker == message.worker }.count
        }
        if !staysGone && (isNew || record.pid != message.pid || !record.isAlive) {
            note(.workerJoined(
                message.worker, host: message.host, pid: message.pid,
                capacity: min(max(0, message.capacity), WorkerMessage.maximumCapacity), isReturning: !isNew))
        }
        if !staysGone {
            record.host = message.host
            record.pid = message.pid
            record.lastSeenAt = now
            record.lastSeenElapsed = clocks.elapsed
            record.isAlive = true
            record.hasLeft = false
            record.capacity = min(max(0, message.capacity), WorkerMessage.maximumCapacity)
        }
        record.delivered = message.delivered
        if viaDispatch { record.isReachable = true }
        dispatch.workers[message.worker] = record
        var directives: [CoordinatorDirective] = []
        var acknowledged = 0
        // Credit returned per worker; almost always all of it to the sender.
        var returnedToSender = 0
        let reports = message.deliveries.map { Dictionary($0.map { ($0.firingId, $0) }, uniquingKeysWith: { first, _ in first }) } ?? [:]
        for ack in message.acks where ack.epoch == identity.epoch {
            guard let flight = dispatch.inFlight.removeValue(forKey: ack.firingId) else { continue }
            if flight.worker == message.worker {
                returnedToSender += 1
            } else {
                dispatch.workers[flight.worker]?.outstanding -= 1
            }
            acknowledged += 1
            let firedAt = deliveryInstant(claimed: ack.firedAt, of: flight, at: now)
            let origin = counters.latenessOrigins.takeOrigin(of: ack.firingId, dueAt: flight.firing.dueAt)
            let lateness = firedAt.timeIntervalSince(origin)
            counters.fireLateness.record(milliseconds: lateness * 1000)
            counters.fireLatenessSeconds.observe(lateness)
            if let report = reports[ack.firingId] {
                removeGoneDestinations(in: report, of: flight.firing.recipient, at: now, directives: &directives)
                if report.hasFailure {
                    dispatch.leaseFailures.forget(ack.firingId)
                    let failure = DeliveryFailure(cause: report.cause, worker: message.worker, outcomes: report.outcomes)
                    self.record(.deliveryFailed(ack.firingId, failure, at: now), into: &directives)
                    counters.deadLettered += 1
                    continue
                }
            }
            // Counted here, not above: a firing a destination failed is dead-lettered, not
            // acknowledged (chime_firings_acknowledged_total).
            counters.acknowledged += 1
            let entry = JournalEntry.acknowledged(
                ack.firingId, seq: flight.seq, worker: message.worker, firedAt: firedAt)
            if let update = self.record(entry, into: &directives).numberedBadge {
                publishBadge(update, of: flight.firing.recipient, at: now, directives: &directives)
            }
        }
        if acknowledged > 0 {
            dispatch.leaseFailures.noteAcknowledged(by: message.worker)
            dispatch.workers[message.worker]?.outstanding -= returnedToSender
            dispatch.workers[message.worker]?.acknowledged += acknowledged
        }
        for outcome in message.outcomes ?? [] {
            finish(outcome, at: now, directives: &directives)
        }
        if message.leaving == true { onWorkerLeaving(message.worker, at: now, directives: &directives) }
        return directives
    }

    /// Whether a record for one more worker fits under `maxWorkers`, forgetting the lost
    /// worker seen longest ago (and holding no firing) when that makes room.
    mutating func makeRoomForWorker() -> Bool {
        guard dispatch.workers.count >= configuration.maxWorkers else { return true }
        let holders = Set(dispatch.inFlight.values.map(\.worker))
        let oldestLost = dispatch.workers.filter { !isAlive($0.value) && !holders.contains($0.key) }
            .min { ($0.value.lastSeenElapsed, $0.key) < ($1.value.lastSeenElapsed, $1.key) }
        guard let oldestLost else { return false }
        dispatch.workers[oldestLost.key] = nil
        return true
    }

    /// The first occurrence after `occurrence` that is after `notBefore`; missed ones in
    /// between are coalesced into the firing being made now.
    /// The newest of the missed occurrences from `oldest` up to (not including) `next`, at or
    /// before `bound`, and how many they are (at least 1: `oldest` itself).
    ///
    /// When occurrence numbers run without gaps, the newest is `next.index - 1`, found in
    /// about one period of expansion however long the downtime was; otherwise (a sequence
    /// that ended, RDATEs, EXDATEs) the occurrences are walked, at most `newestMissedWalk`.
    static func newestMissed(
        from oldest: Occurrence, before next: Occurrence?, in recurrence: Recurrence, notAfter bound: Date
    ) -> (occurrence: Occurrence, count: Int) {
        if let next, next.index > oldest.index {
            let index = next.index - 1
            if index == oldest.index { return (oldest, 1) }
            if let instant = recurrence.occurrence(at: index), instant > oldest.instant, instant < next.instant,
                instant <= bound
            {
                return (Occurrence(index: index, instant: instant), index - oldest.index + 1)
            }
        }
        var newest = oldest
        var count = 1
        while count < newestMissedWalk, let following = recurrence.nextOccurrence(after: newest),
            following.instant <= bound, next.map({ following.instant < $0.instant }) ?? true
        {
            newest = following
            count += 1
        }
        return (newest, count)
    }

    /// The most occurrences `newestMissed` walks one by one.
    static let newestMissedWalk = 100_000

    static func occurrence(after occurrence: Occurrence, in recurrence: Recurrence, notBefore: Date) -> Occurrence? {
        guard let next = recurrence.nextOccurrence(after: occurrence) else { return nil }
        if next.instant > notBefore { return next }
        guard let upcoming = recurrence.firstOccurrence(onOrAfter: notBefore, fromIndex: next.index) else {
            return nil
        }
        if upcoming.instant == notBefore { return recurrence.nextOccurrence(after: upcoming) }
        return upcoming
    }
}

extension CoordinatorState {
    /// Whether `worker` is known and within its liveness window.
    func isAlive(_ worker: WorkerID) -> Bool {
        dispatch.workers[worker]?.isAlive ?? false
    }
}

extension CoordinatorState {
    /// Moves due nags to the unsettled firings and the waiting line: one `.nagFired` each,
    /// whose fold takes it off the nag timer.
    mutating func releaseDueNags(at now: Date, directives: inout [CoordinatorDirective]) {
        guard let first = nags.first, first.deadline <= now else { return }
        for id in Self.inFiringOrder(nags.due(at: now, limit: .max) { _ in true }) {
            if let made = record(.nagFired(id, at: now), into: &directives).made { dispatch.waiting.append(made) }
        }
    }

    /// The ids of `due` by deadline, then by firing id: equal deadlines go out in an order
    /// that depends on nothing but the firings. A timer queue breaks such ties by the order
    /// the deadlines were set, which a recovered state (a snapshot lists holds and nags its
    /// own way) does not share with the live one, and the order decides what `unhandled:
    /// replace` leaves on the delivered list (crash equivalence, seeds 319 and 338).
    static func inFiringOrder(_ due: [(key: FiringID, deadline: Date)]) -> [FiringID] {
        due.sorted { ($0.deadline, $0.key) < ($1.deadline, $1.key) }.map(\.key)
    }

    /// Releases the firings whose quiet window has ended to the unsettled firings and the
    /// waiting line: one `.attention(.released)` each, whose fold takes it off the holds.
    /// A recipient with scheduled summaries gets one `summary` event listing what was released
    /// for it in this turn.
    mutating func releaseDueHolds(at now: Date, directives: inout [CoordinatorDirective]) {
        guard let first = durable.deliveries.holds.first, first.deadline <= now else { return }
        var summaries: [RecipientID: [Firing]] = [:]
        for id in Self.inFiringOrder(durable.deliveries.holds.due(at: now, limit: .max) { _ in true }) {
            guard let made = record(.attention(.released(id, at: now)), into: &directives).made else { continue }
            dispatch.waiting.append(made)
            if durable.hasSummaries(made.firing.recipient) { summaries[made.firing.recipient, default: []].append(made.firing) }
        }
        for (recipient, firings) in summaries.sorted(by: { $0.key < $1.key }) {
            let categories = durable.recipients.registered[recipient]?.categories ?? []
            directives.append(.publish(.summary(SummaryEvent(
                recipient: recipient, at: now, firings: firings.map(localized), categories: categories))))
        }
    }

    /// `firing` with its localizable keys resolved in its recipient's locale
    /// (``StringTables/localized(_:locale:)``); as it is without keys (one comparison). Done at
    /// dispatch, not in the fold: the text follows the tables of the coordinator that
    /// dispatches, on every attempt, and the journal keeps the keys.
    func localized(_ firing: Firing) -> Firing {
        guard firing.content.hasLocalizableKeys else { return firing }
        var resolved = firing
        resolved.content = configuration.strings.localized(firing.content, locale: durable.recipients.registered[firing.recipient]?.locale)
        return resolved
    }
}

extension CoordinatorState {
    /// The destinations of `firings`' recipients that hold any, for their batch, without the
    /// channels each recipient opted out of for every firing (`optedOutChannels["*"]`); `nil`
    /// (and no look-up at all) while no registered recipient holds one.
    func destinations(of firings: [Firing]) -> [String: [Destination]]? {
        let recipients = durable.recipients
        guard !recipients.holdingDestinations.isEmpty else { return nil }
        var found: [String: [Destination]] = [:]
        for firing in firings where found[firing.recipient.rawValue] == nil {
            guard let destinations = recipients.destinations(of: firing.recipient) else { continue }
            let optedOut = recipients.registered[firing.recipient]?.optedOutChannels?.channels(forCategory: nil) ?? []
            found[firing.recipient.rawValue] = optedOut.isEmpty ? destinations : destinations.filter { !optedOut.contains($0.channelKind) }
        }
        return found.isEmpty ? nil : found
    }

    /// The destinations of the firings of `firings` that do not go to all of their
    /// recipient's, by firing id; `nil` when every firing does (the common case, found with
    /// no look-up unless a dead letter is retried or a recipient opts out per category):
    /// - a retried dead letter goes only to the destinations it did not reach
    ///   (``Deliveries/retrySkips``);
    /// - a firing of a category whose channels the recipient opted out of skips them (the
    ///   channels opted out of for every firing are already gone from the batch's list).
    func firingDestinations(of firings: [Firing]) -> [String: [Destination]]? {
        let recipients = durable.recipients
        let skips = durable.deliveries.retrySkips
        guard !recipients.holdingDestinations.isEmpty, !skips.isEmpty || !recipients.optingOutByCategory.isEmpty else { return nil }
        var found: [String: [Destination]] = [:]
        for firing in firings {
            let skipped = skips.isEmpty ? nil : skips[firing.firingId]
            let optOuts = recipients.optingOutByCategory.contains(firing.recipient) || skipped != nil
                ? recipients.registered[firing.recipient]?.optedOutChannels : nil
            let ownOptOuts = firing.content.category.map { optOuts?.channels[$0]?.isEmpty == false } ?? false
            guard skipped != nil || ownOptOuts, let all = recipients.destinations(of: firing.recipient) else { continue }
            let optedOut = optOuts?.channels(forCategory: firing.content.category) ?? []
            let skippedSet = Set(skipped ?? [])
            found[firing.firingId.description] = all.filter { !skippedSet.contains($0.redactedKey) && !optedOut.contains($0.channelKind) }
        }
        return found.isEmpty ? nil : found
    }
}
