import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

extension CoordinatorState {
    /// `wrong_shard` when `request` names a recipient whose slot another shard owns (Redis
    /// Cluster's `MOVED`), else `nil`. Every recipient it names counts: each reminder of a
    /// `schedule` (one of another shard refuses the whole batch), the recipient of a listing,
    /// cancel, switch, registration, badge, delivered list or catch-up, the recipient a firing
    /// id leads with (a firing id of an earlier version, which names none, is resolved through
    /// the state) and a job id's. A request about no recipient (`status`, a listing or cancel
    /// of every recipient, `deadLetters`, `events` without one, `ping`, `map`) is this shard's
    /// to answer with its part. One shard owning every slot refuses nothing and hashes nothing.
    ///
    /// While slots move (the move ledger is not idle) the ledger's write gate decides for
    /// every recipient: `try_again` with `retryAfterMs` while its slot's writes are paused or
    /// handed over and the move undecided here, `wrong_shard` once the map shows the target
    /// (on the source) or until the commit is recorded (on the target).
    ///
    /// A slot of a move the register has open from this shard that this shard's ledger does
    /// not hold yet gets `try_again` too (``isInUnstartedOutgoingMove(slot:)``).
    ///
    /// With a map register, until the first record is read (a start or a standby's takeover,
    /// whose configured map may be older than the register's) every request naming a
    /// recipient is answered `try_again` (50 ms): a write taken under a stale map could land
    /// on slots the register gave away.
    func ownershipRefusal(_ request: ControlRequest, at now: Date = Date.distantPast) -> WireError? {
        let isMoving = !durable.moves.isIdle
        let isAwaiting = isAwaitingMapRecord
        let hasUnstarted = hasUnstartedOutgoingMove
        guard !shardView.ownership.ownsEverySlot || isMoving || isAwaiting || hasUnstarted else { return nil }
        func refusal(of recipient: RecipientID, field: String) -> WireError? {
            if isAwaiting {
                return WireError(
                    .tryAgain, "shard \(configuration.shardID) has not read the map register since it started; retry in 50 ms",
                    field: field, retryAfterMilliseconds: 50)
            }
            if hasUnstarted, let map = configuration.shardMap, isInUnstartedOutgoingMove(slot: map.slot(of: recipient)) {
                return WireError(
                    .tryAgain, "recipient \(recipient.rawValue)'s slot \(map.slot(of: recipient)) is in a move that has not begun here; retry in 50 ms",
                    field: field, retryAfterMilliseconds: 50)
            }
            guard isMoving, let map = configuration.shardMap else { return shardView.ownership.refusal(of: recipient, field: field) }
            return durable.moves.writeGate(for: recipient, shard: configuration.shardID, map: map, at: now, pausedUntil: shardView.movePauses)
                .refusal(of: recipient, map: map, field: field)
        }
        func check(_ recipient: RecipientID?, field: String) -> WireError? {
            recipient.flatMap { refusal(of: $0, field: field) }
        }
        switch request.command {
        case .schedule(let reminders):
            for (index, reminder) in reminders.enumerated() {
                if let refusal = refusal(of: reminder.recipient, field: "reminders[\(index)].recipient") { return refusal }
            }
            return nil
        case .list(let filter, _, _, _, _), .cancel(let filter):
            return check(filter.recipient, field: "recipient")
        case .setEnabled(_, _, let recipient), .events(_, let recipient, _, _):
            return check(recipient, field: "recipient")
        case .register(let recipient):
            return check(recipient.id, field: "recipient.id")
        case .recipient(let recipient), .badge(let recipient, _), .delivered(let recipient, _, _, _), .destinations(let recipient, _, _):
            return check(recipient, field: "recipient")
        case .ack(let firingId), .retry(let firingId), .act(let firingId, _, _, _, _):
            return check(durable.recipient(of: firingId), field: "firingId")
        case .deleteDeadLetter(let firingId):
            return check(durable.recipient(of: firingId), field: "firingId")
        case .trigger(let command):
            return check(command.recipient, field: "recipient")
        case .job(let jobId):
            return check(ActionJob.recipient(ofJobID: jobId) ?? jobs[jobId]?.job.recipient, field: "jobId")
        case .status, .workers, .stats, .ping, .deadLetters, .snapshot, .compact, .store, .map, .move:
            return nil
        }
    }
}

extension CoordinatorState {
    /// The id of the `generatedIDs`-th reminder scheduled without one: `r<epoch>-<ms>-<n>`
    /// (the coordinator's epoch, the Unix time in milliseconds, a counter since start), and
    /// in a cluster of several shards `r<shard>.<epoch>-<ms>-<n>`, so two shards never
    /// generate the same id (each shard has its own epochs and counters).
    func generatedReminderID(at now: Date) -> ReminderID {
        let milliseconds = Int(now.timeIntervalSince1970 * 1000)
        let shard = (configuration.shardMap?.shards.count ?? 1) > 1 ? "\(configuration.shardID)." : ""
        return ReminderID("r\(shard)\(identity.epoch)-\(milliseconds)-\(counters.generatedIDs)")
    }
}

extension CoordinatorState {
    /// The `actionFinished` event of `job`, carrying this shard's id in a cluster.
    func finishedEvent(_ job: ActionJob, outcome: ActionOutcome, at now: Date) -> ActionEvent {
        var event = ActionEvent(type: "actionFinished", job: job, outcome: outcome, at: now)
        event.shard = configuration.eventShard
        return event
    }
}

extension CoordinatorConfiguration {
    /// The shard id this coordinator's events carry: its id in a cluster of several shards;
    /// `nil` (no `shard` key: shard 0, the JSON of a single coordinator unchanged) otherwise.
    public var eventShard: Int? { (shardMap?.shards.count ?? 1) > 1 ? shardID : nil }
}
