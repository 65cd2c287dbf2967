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
             .delivered, .events, .ping]
        case .worker: []
        case .subscriber: [.events]
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
    /// - Returns: a `forbidden` error naming what is refused.
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
        func existing(_ ids: [ReminderID], field: String) -> WireError? {
            for (index, id) in ids.enumerated() {
                if let recipient = entries[id]?.recipient, let error = outside(recipient, field: "\(field)[\(index)]") {
                    return error
                }
            }
            return nil
        }
        func selection(_ filter: ReminderFilter) -> WireError? {
            if let recipient = filter.recipient { return outside(recipient, field: "recipient") }
            if let ids = filter.ids { return existing(ids, field: "ids") }
            return WireError(.forbidden, "a key restricted to some recipients must name a recipient or ids", field: "recipient")
        }
        switch command {
        case .schedule(let reminders):
            for (index, reminder) in reminders.enumerated() {
                // Replacing a reminder of another recipient would take it over.
                if let error = outside(reminder.recipient, field: "reminders[\(index)].recipient")
                    ?? existing([reminder.id], field: "reminders[\(index)].id")
                {
                    return error
                }
            }
            return nil
        case .list(let filter, _, _, _), .cancel(let filter):
            return selection(filter)
        case .setEnabled(let ids, _):
            return existing(ids, field: "ids")
        case .register(let recipient):
            return outside(recipient.id, field: "recipient.id")
        case .recipient(let recipient), .badge(let recipient, _), .delivered(let recipient, _):
            return outside(recipient, field: "recipient")
        case .ack(let firingId), .act(let firingId, _, _, _, _):
            guard let recipient = entries[firingId.reminder]?.recipient else {
                return WireError(.forbidden, "firing \(firingId) belongs to no reminder this key can see", field: "firingId")
            }
            return outside(recipient, field: "firingId")
        case .job(let jobId):
            return jobs[jobId].flatMap { outside($0.job.recipient, field: "jobId") }
        case .events(_, let recipient, _, _):
            guard let recipient else {
                return WireError(.forbidden, "a key restricted to some recipients must name a recipient", field: "recipient")
            }
            return outside(recipient, field: "recipient")
        case .status, .workers, .stats, .ping, .deadLetters, .retry, .snapshot, .compact, .store:
            return nil
        }
    }
}
