import ChimeCore
import ChimeWire
import ChimeSecurity

extension CoordinatorState {
    /// The control operations each role may use; `operator` may use all.
    static func operations(for role: Role) -> Set<ControlOperation> {
        switch role {
        case .operator: Set(ControlOperation.allCases)
        case .client:
            [.schedule, .list, .cancel, .enable, .disable, .register, .recipient, .badge, .ack, .act, .job,
             .delivered, .destinations, .events, .ping, .map, .locate]
        // A worker follows the shard map (read-only); nothing else on control.
        case .worker: [.map]
        // A gap-free subscriber catches up on each shard: it needs the map to find them.
        case .subscriber: [.events, .map]
        }
    }

    /// Why `principal` may not make `request`, or `nil` when it may: its key must still be
    /// allowed with the role it connected with (a reload may have removed it), the role must
    /// allow the operation, and a client restricted to some recipients may touch only theirs
    /// (reminders it names must belong to them, and listings, cancels and catch-up must name
    /// one of them). Only an operator, or a request that shows the recipient's current token,
    /// may replace or remove a registered recipient's token. Pure and cheap: a dictionary
    /// lookup or two per request.
    ///
    /// - Parameter grant: the principal's key in the allow-lists in force now; `nil` when
    ///   it is no longer there.
    /// - Returns: a `forbidden` error naming what is refused; `not_found` for a reminder,
    ///   firing or job outside a restricted key's recipients, worded as for one that does not
    ///   exist (no existence oracle).
    func authorize(_ request: ControlRequest, for principal: Principal, grant: AccessPolicy.Grant?) -> WireError? {
        guard let grant, grant.role == principal.role else {
            return WireError(.forbidden, "this key is no longer allowed as \(principal.role.rawValue)")
        }
        guard Self.operations(for: grant.role).contains(request.operation) else {
            return WireError(.forbidden, "role \(grant.role.rawValue) may not use \(request.operation.rawValue)")
        }
        if grant.role != .operator, case .register(let recipient) = request.command,
            let registered = recipients[recipient.id], registered.token != nil,
            !registered.accepts(token: recipient.token), !registered.accepts(token: request.currentToken)
        {
            return WireError(
                .forbidden,
                "recipient \(recipient.id.rawValue) has a token: replacing or removing it needs the current one (currentToken) or the operator role",
                field: "currentToken")
        }
        guard let scope = grant.scope else { return nil }
        return authorize(request.command, within: scope)
    }

    private func authorize(_ command: ControlRequest.Command, within scope: RecipientScope) -> WireError? {
        func outside(_ recipient: RecipientID, field: String) -> WireError? {
            scope.allows(recipient)
                ? nil
                : WireError(.forbidden, "recipient \(recipient.rawValue) is outside this key's recipients (\(scope.summary))", field: field)
        }
        // No existence oracle: a reminder, firing or job of another tenant is answered as one
        // that does not exist, with the same words. Ids named without a recipient name this
        // key's recipients' reminders only (the request is narrowed to its scope: `ClientAddress.scope`).
        func visible(_ ids: [ReminderID], field: String) -> WireError? {
            for (index, id) in ids.enumerated()
            where !durable.keys(named: [id], of: nil, after: nil).contains(where: { scope.allows($0.recipient) }) {
                return WireError(.notFound, "no reminder \(id.rawValue) among this key's recipients", field: "\(field)[\(index)]")
            }
            return nil
        }
        func selection(_ filter: ReminderFilter) -> WireError? {
            if let recipient = filter.recipient { return outside(recipient, field: "recipient") }
            if let ids = filter.ids { return visible(ids, field: "ids") }
            return WireError(.forbidden, "a key restricted to some recipients must name a recipient or ids", field: "recipient")
        }
        switch command {
        case .schedule(let reminders):
            // Reminder ids are per recipient: a reminder of another recipient is another key.
            for (index, reminder) in reminders.enumerated() {
                if let error = outside(reminder.recipient, field: "reminders[\(index)].recipient") { return error }
            }
            return nil
        case .list(let filter, _, _, _, _), .cancel(let filter):
            return selection(filter)
        case .setEnabled(let ids, _, let recipient):
            return recipient.map { outside($0, field: "recipient") } ?? visible(ids, field: "ids")
        case .register(let recipient):
            return outside(recipient.id, field: "recipient.id")
        case .recipient(let recipient), .badge(let recipient, _), .delivered(let recipient, _, _, _), .destinations(let recipient, _, _):
            return outside(recipient, field: "recipient")
        case .ack(let firingId), .act(let firingId, _, _, _, _):
            guard let recipient = durable.recipient(of: firingId), scope.allows(recipient) else {
                return WireError(.notFound, "no firing \(firingId) among this key's recipients", field: "firingId")
            }
            return nil
        case .job(let jobId):
            guard let job = jobs[jobId], scope.allows(job.job.recipient) else {
                return WireError(.notFound, "no job \(jobId) among this key's recipients", field: "jobId")
            }
            return nil
        case .events(_, let recipient, _, _):
            guard let recipient else {
                return WireError(.forbidden, "a key restricted to some recipients must name a recipient", field: "recipient")
            }
            return outside(recipient, field: "recipient")
        case .status, .workers, .stats, .ping, .deadLetters, .retry, .snapshot, .compact, .store, .map, .move:
            return nil
        case .deleteDeadLetter:
            return nil
        case .trigger(let command):
            return command.recipient.flatMap { outside($0, field: "recipient") }
        }
    }
}
