import ChimeCore

extension ControlRequest {
    /// The one recipient this request is about, when it names one: the routing key a sharded
    /// cluster sends it by, and the recipient its remembered reply moves with. `nil` for a
    /// request about several recipients or none (a `schedule` of several recipients'
    /// reminders, `list` or `cancel` without a recipient, `status`, …) and for a firing id of
    /// an earlier version (which names no recipient).
    public var routingRecipient: RecipientID? {
        switch command {
        case .schedule(let reminders):
            guard let first = reminders.first?.recipient, reminders.allSatisfy({ $0.recipient == first }) else { return nil }
            return first
        case .list(let filter, _, _, _, _), .cancel(let filter): return filter.recipient
        case .setEnabled(_, _, let recipient), .events(_, let recipient, _, _): return recipient
        case .register(let recipient): return recipient.id
        case .recipient(let recipient), .badge(let recipient, _), .delivered(let recipient, _, _, _),
            .destinations(let recipient, _, _):
            return recipient
        case .ack(let firingId), .retry(let firingId), .act(let firingId, _, _, _, _):
            return firingId.isLegacy ? nil : firingId.recipient
        case .deleteDeadLetter(let firingId): return firingId.isLegacy ? nil : firingId.recipient
        case .job(let jobId): return ActionJob.recipient(ofJobID: jobId)
        case .trigger(let command): return command.recipient
        case .status, .workers, .stats, .ping, .deadLetters, .snapshot, .compact, .store, .map, .move: return nil
        }
    }
}
