import ChimeCore
import Foundation

/// The operations the coordinator's control socket serves (`op` of a request).
public enum ControlOperation: String, Codable, Sendable, CaseIterable {
    case schedule, list, cancel, status, workers, stats, ping
    case deadLetters, retry, snapshot, compact, store, events
    case register, recipient, badge, ack, enable, disable, delivered, act, job
    /// The cluster's shard map (`ShardMap`): which shard owns which slots, and where.
    case map
    /// A step of a slot move, sent by a mover (`chime shards move`) to a source or target
    /// shard (operator role only): `step` names it, its arguments are fields beside it
    /// (``SlotMoveRequest``).
    case move
    /// Delete one dead-lettered firing for good (operator only; JSON `"deleteDeadLetter"`).
    case deleteDeadLetter
    /// Operators' triggers (``TriggerCommand``): fire a reminder now, backfill a past range,
    /// set its remaining count.
    case triggerNow, backfill, remaining
    /// A recipient's location report (regions, and sun triggers at the recipient's place).
    case locate
    /// Shared exclusion calendars: set, delete, list (operator; a cluster client sends the
    /// changes to every shard).
    case setCalendar, deleteCalendar, calendars
    /// Add or remove a recipient's delivery destinations (webhooks, APNs, FCM), keeping the
    /// rest of its registration (``ControlRequest/Command/destinations(_:add:remove:)``).
    case destinations

    /// The keys a request of this op may carry besides `op` and `requestId`; any other key
    /// is refused with `unknown_field`.
    public var argumentKeys: [String] {
        switch self {
        case .schedule: ["reminders", "reminder"]
        case .list: ["ids", "recipient", "match", "all", "limit", "cursor", "order"]
        case .cancel: ["ids", "recipient", "match", "all"]
        case .status, .workers, .stats, .ping, .snapshot, .compact, .store, .map: []
        case .deadLetters: ["limit", "cursor"]
        case .retry, .ack: ["firingId"]
        case .deleteDeadLetter: ["firingId"]
        case .events: ["after", "recipient", "limit", "cursor"]
        case .register: ["recipient", "currentToken"]
        case .recipient: ["recipient"]
        case .badge: ["recipient", "value"]
        case .enable: ["ids", "recipient"]
        case .disable: ["ids", "recipient", "note"]
        case .triggerNow: ["id", "recipient"]
        case .backfill: ["id", "recipient", "from", "to"]
        case .remaining: ["id", "recipient", "count"]
        case .locate: ["recipient", "latitude", "longitude", "accuracy", "at"]
        case .setCalendar: ["name", "calendar"]
        case .deleteCalendar: ["name"]
        case .calendars: ["name"]
        case .delivered: ["recipient", "remove", "limit", "cursor"]
        case .destinations: ["recipient", "add", "remove"]
        case .act: ["firingId", "action", "text", "token", "snooze"]
        case .job: ["jobId"]
        case .move: SlotMoveRequest.argumentKeys
        }
    }
}

/// Selects reminders for `list` and `cancel`. All given criteria must hold.
///
/// JSON shape: `{"ids": ["a", "b"], "recipient": "alice", "match": {"key": "value"}}`;
/// `match` compares `userInfo[key]` as text (numbers and booleans in JSON spelling).
public struct ReminderFilter: Codable, Hashable, Sendable {
    /// Only these reminder ids.
    public var ids: [ReminderID]?
    /// Only this recipient's reminders.
    public var recipient: RecipientID?
    /// Only reminders whose `userInfo` has every `key: value` pair.
    public var match: [String: String]?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(ids: [ReminderID]? = nil, recipient: RecipientID? = nil, match: [String: String]? = nil) {
        self.ids = ids
        self.recipient = recipient
        self.match = match
    }

    /// Whether no criterion is given (the filter selects everything).
    public var isEmpty: Bool { ids == nil && recipient == nil && (match?.isEmpty ?? true) }

    /// Whether `reminder` satisfies every criterion.
    public func matches(_ reminder: Reminder) -> Bool {
        if let ids, !ids.contains(reminder.id) { return false }
        if let recipient, reminder.recipient != recipient { return false }
        if let match {
            for (key, value) in match where !reminder.userInfoMatches(key: key, value: value) {
                return false
            }
        }
        return true
    }
}

/// A decoded control request: `{"op": "...", "requestId": "...", …arguments}`.
///
/// `requestId` is optional; when given it is echoed in the reply and makes a retried
/// request idempotent.
public struct ControlRequest: Sendable, Hashable {
    /// What the request asks for, with its arguments.
    public enum Command: Sendable, Hashable {
        /// Schedule (or replace, by id) these reminders: `{"reminders": [...]}` or `{"reminder": {...}}`.
        case schedule([Reminder])
        /// One page of the reminders matching the filter, in `order` (reminder-id order by
        /// default; `"order": "next-fire"`: soonest next firing first); `all` includes
        /// delivered, disabled and finished ones; `limit` is the page size (1…`PageSize.maximum`,
        /// `PageSize.default` when absent); `cursor` continues after the previous page (a
        /// cursor of one order is refused by the other).
        case list(ReminderFilter, all: Bool, limit: Int?, cursor: PageCursor? = nil, order: ListOrder = .id)
        /// Cancel the reminders matching the filter (a non-empty filter, or `"all": true`).
        case cancel(ReminderFilter)
        case status, workers, stats, ping
        /// The shard map this coordinator serves under (a `ShardMap`; one shard owning every
        /// slot when the configuration names no cluster).
        case map
        /// One page of the firings that exhausted their attempts, oldest due first (`limit`
        /// and `cursor` as for `list`).
        case deadLetters(limit: Int? = nil, cursor: PageCursor? = nil)
        /// Move a dead-lettered firing back to the waiting line (same firing id, attempt 1).
        case retry(FiringID)
        /// Delete a dead-lettered firing for good: it never fires again (`not_found` for a
        /// firing that is not dead-lettered).
        case deleteDeadLetter(FiringID)
        /// Write a snapshot of the coordinator's state now.
        case snapshot
        /// Write a snapshot and remove the journal segments it covers.
        case compact
        /// Show the store's sizes, segment count and fsync latency.
        case store
        /// Retained fire events with `seq > after` (catch-up for subscribers that were offline;
        /// ZeroMQ Guide ch. 5, "Clone"), optionally of one recipient, at most `limit` (a page:
        /// 1…`PageSize.maximum`, `PageSize.default` when absent); a `cursor` replaces `after`.
        case events(after: UInt64, recipient: RecipientID?, limit: Int?, cursor: PageCursor? = nil)
        /// Register (or replace) a recipient: settings, categories, zone, token, cap.
        case register(Recipient)
        /// Show a registered recipient (token redacted) with its badge.
        case recipient(RecipientID)
        /// Set a recipient's badge: N > 0 sets it; N <= 0 sets 0 and clears the delivered list.
        case badge(RecipientID, Int)
        /// The user handled a delivered firing without an action (`chime ack`).
        case ack(FiringID)
        /// Switch reminders on (`true`) or off, keeping their records: `recipient`'s reminders
        /// with these ids, or every recipient's when `recipient` is absent.
        case setEnabled([ReminderID], Bool, recipient: RecipientID? = nil)
        /// List a recipient's delivered, unhandled firings, newest first; `remove` takes one off
        /// first. One page: at most `limit` firings (1…`PageSize.maximum`; every firing when
        /// absent), and at most `limits.maxReplyBytes` of reply, ending with a `nextCursor`
        /// when more follow; `cursor` continues after the previous page.
        case delivered(RecipientID, remove: FiringID?, limit: Int? = nil, cursor: PageCursor? = nil)
        /// Add destinations to a recipient (replacing one with the same key) and remove those
        /// whose ``Destination/key`` is in `remove`, keeping the rest of its registration: a
        /// recipient not registered yet is registered with the defaults. JSON
        /// `{"op": "destinations", "recipient": "alice", "add": [destination, …], "remove":
        /// ["webhook:https://…", …]}` (both lists optional); replies with the recipient,
        /// redacted. A key not held is `not_found`.
        case destinations(RecipientID, add: [Destination], remove: [String])
        /// Run an action on a delivered firing (`token` for authenticationRequired actions,
        /// `snooze` seconds for the snooze action).
        case act(firingId: FiringID, action: String, text: String?, token: String?, snoozeSeconds: Double?)
        /// Show an action job's state.
        case job(String)
        /// A slot-move step with its arguments (``SlotMoveRequest``).
        case move(SlotMoveRequest)
        /// A trigger operation (issue 41): `triggerNow`, `backfill`, `remaining`.
        case trigger(TriggerCommand)
    }

    /// The client's id for this request, echoed in the reply.
    public var requestId: String?
    /// The operation and its arguments.
    public var command: Command
    /// `register` only: the recipient's token as it is now, which lets a key without the
    /// operator role replace or remove it (JSON `"currentToken"`).
    public var currentToken: String?
    /// `disable` only: why the reminders were switched off, kept with them and listed until
    /// they are switched on again (JSON `"note"`, at most 1,000 bytes).
    public var note: String?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(requestId: String? = nil, command: Command, currentToken: String? = nil, note: String? = nil) {
        self.requestId = requestId
        self.command = command
        self.currentToken = currentToken
        self.note = note
    }

    /// The operation name of `command`.
    public var operation: ControlOperation {
        switch command {
        case .schedule: .schedule
        case .list: .list
        case .cancel: .cancel
        case .status: .status
        case .workers: .workers
        case .stats: .stats
        case .ping: .ping
        case .map: .map
        case .deadLetters: .deadLetters
        case .retry: .retry
        case .deleteDeadLetter: .deleteDeadLetter
        case .snapshot: .snapshot
        case .compact: .compact
        case .store: .store
        case .events: .events
        case .register: .register
        case .recipient: .recipient
        case .badge: .badge
        case .ack: .ack
        case .setEnabled(_, let enabled, _): enabled ? .enable : .disable
        case .delivered: .delivered
        case .destinations: .destinations
        case .act: .act
        case .job: .job
        case .move: .move
        case .trigger(let command): command.operation
        }
    }
}

extension ControlRequest: Codable {
    private enum CodingKeys: String, CodingKey {
        case op, requestId, reminders, reminder, ids, recipient, match, all, limit, firingId, after
        case value, remove, action, text, token, snooze, jobId, currentToken, cursor, note
        case add, order
    }

    /// Decodes `{"op", "requestId", …arguments}`.
    /// - Throws: `WireError` `.unknownOperation` for an unknown op; `DecodingError` for a
    ///   missing or wrongly typed argument (numbers that do not fit name their field) and for
    ///   a key the op does not take (an `UnknownFieldError` underneath: `unknown_field`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        requestId = try container.decodeIfPresent(String.self, forKey: .requestId)
        currentToken = try container.decodeIfPresent(String.self, forKey: .currentToken)
        let opName = try container.decode(String.self, forKey: .op)
        guard let op = ControlOperation(rawValue: opName) else {
            throw WireError(
                .unknownOperation,
                "unknown op \"\(opName)\"; expected one of \(ControlOperation.allCases.map(\.rawValue).joined(separator: ", "))",
                field: "op")
        }
        try decoder.rejectUnknownKeys(allowing: ["op", "requestId"] + op.argumentKeys)
        note = try container.decodeIfPresent(String.self, forKey: .note)
        if let note, note.utf8.count > 1_000 {
            throw WireError(.invalidArgument, "note must be at most 1,000 bytes", field: "note")
        }
        func cursor(_ kind: PageCursor.Kind) throws -> PageCursor? {
            try container.decodeIfPresent(String.self, forKey: .cursor).map { text throws(WireError) in
                try PageCursor(text: text, expecting: kind)
            }
        }
        func filter() throws -> ReminderFilter {
            ReminderFilter(
                ids: try container.decodeIfPresent([ReminderID].self, forKey: .ids),
                recipient: try container.decodeIfPresent(RecipientID.self, forKey: .recipient),
                match: try container.decodeIfPresent([String: String].self, forKey: .match))
        }
        switch op {
        case .schedule:
            if let many = try container.decodeIfPresent([Reminder].self, forKey: .reminders) {
                command = .schedule(many)
            } else if let one = try container.decodeIfPresent(Reminder.self, forKey: .reminder) {
                command = .schedule([one])
            } else {
                throw WireError(.invalidArgument, "schedule needs \"reminders\" (an array) or \"reminder\"", field: "reminders")
            }
        case .list:
            let order = try container.decodeIfPresent(String.self, forKey: .order).map { name throws(WireError) in
                guard let order = ListOrder(rawValue: name) else {
                    throw WireError(
                        .invalidArgument, "order must be one of \(ListOrder.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(name)\"",
                        field: "order")
                }
                return order
            } ?? .id
            command = .list(
                try filter(), all: try container.decodeIfPresent(Bool.self, forKey: .all) ?? false,
                limit: try container.decodeNumberIfPresent(Int.self, forKey: .limit, expected: "a whole number"),
                cursor: try cursor(order.cursorKind), order: order)
        case .cancel:
            let selection = try filter()
            let all = try container.decodeIfPresent(Bool.self, forKey: .all) ?? false
            if selection.isEmpty && !all {
                throw WireError(
                    .invalidArgument, "cancel needs ids, a recipient or a match (or \"all\": true to cancel everything)")
            }
            command = .cancel(selection)
        case .status: command = .status
        case .workers: command = .workers
        case .stats: command = .stats
        case .ping: command = .ping
        case .map: command = .map
        case .deadLetters:
            command = .deadLetters(
                limit: try container.decodeNumberIfPresent(Int.self, forKey: .limit, expected: "a whole number"),
                cursor: try cursor(.deadLetters))
        case .retry: command = .retry(try container.decode(FiringID.self, forKey: .firingId))
        case .deleteDeadLetter: command = .deleteDeadLetter(try container.decode(FiringID.self, forKey: .firingId))
        case .snapshot: command = .snapshot
        case .compact: command = .compact
        case .store: command = .store
        case .register:
            command = .register(try container.decode(Recipient.self, forKey: .recipient))
        case .recipient:
            command = .recipient(try container.decode(RecipientID.self, forKey: .recipient))
        case .badge:
            command = .badge(
                try container.decode(RecipientID.self, forKey: .recipient),
                try container.decodeNumber(Int.self, forKey: .value, expected: "a whole number"))
        case .ack:
            command = .ack(try container.decode(FiringID.self, forKey: .firingId))
        case .enable, .disable:
            let ids = try container.decode([ReminderID].self, forKey: .ids)
            if ids.isEmpty { throw WireError(.invalidArgument, "ids must name at least one reminder", field: "ids") }
            command = .setEnabled(
                ids, op == .enable, recipient: try container.decodeIfPresent(RecipientID.self, forKey: .recipient))
        case .delivered:
            let limit = try container.decodeNumberIfPresent(Int.self, forKey: .limit, expected: "a whole number")
            if let limit { _ = try PageSize.checked(limit) }
            command = .delivered(
                try container.decode(RecipientID.self, forKey: .recipient),
                remove: try container.decodeIfPresent(FiringID.self, forKey: .remove), limit: limit,
                cursor: try cursor(.delivered))
        case .destinations:
            let add = try container.decodeIfPresent([Destination].self, forKey: .add) ?? []
            let remove = try container.decodeIfPresent([String].self, forKey: .remove) ?? []
            guard add.count <= Destination.maximumPerRecipient, remove.count <= Destination.maximumPerRecipient else {
                throw WireError(.invalidArgument, "at most \(Destination.maximumPerRecipient) destinations to add and to remove", field: "add")
            }
            command = .destinations(try container.decode(RecipientID.self, forKey: .recipient), add: add, remove: remove)
        case .act:
            command = .act(
                firingId: try container.decode(FiringID.self, forKey: .firingId),
                action: try container.decode(String.self, forKey: .action),
                text: try container.decodeIfPresent(String.self, forKey: .text),
                token: try container.decodeIfPresent(String.self, forKey: .token),
                snoozeSeconds: try container.decodeNumberIfPresent(Double.self, forKey: .snooze, expected: "a number of seconds"))
        case .job:
            command = .job(try container.decode(String.self, forKey: .jobId))
        case .triggerNow, .backfill, .remaining, .locate, .setCalendar, .deleteCalendar, .calendars:
            command = .trigger(try TriggerCommand(operation: op, from: decoder))
        case .move:
            command = .move(try SlotMoveRequest(from: decoder))
        case .events:
            let after = try container.decodeNumberIfPresent(UInt64.self, forKey: .after, expected: "a whole number ≥ 0")
            let cursor = try cursor(.events)
            if after != nil && cursor != nil {
                throw WireError(.invalidArgument, "give \"after\" or \"cursor\", not both", field: "cursor")
            }
            command = .events(
                after: after ?? 0, recipient: try container.decodeIfPresent(RecipientID.self, forKey: .recipient),
                limit: try container.decodeNumberIfPresent(Int.self, forKey: .limit, expected: "a whole number"),
                cursor: cursor)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(operation.rawValue, forKey: .op)
        try container.encodeIfPresent(requestId, forKey: .requestId)
        try container.encodeIfPresent(currentToken, forKey: .currentToken)
        try container.encodeIfPresent(note, forKey: .note)
        func encode(_ filter: ReminderFilter) throws {
            try container.encodeIfPresent(filter.ids, forKey: .ids)
            try container.encodeIfPresent(filter.recipient, forKey: .recipient)
            try container.encodeIfPresent(filter.match, forKey: .match)
        }
        switch command {
        case .schedule(let reminders):
            try container.encode(reminders, forKey: .reminders)
        case .list(let filter, let all, let limit, let cursor, let order):
            try encode(filter)
            if all { try container.encode(true, forKey: .all) }
            try container.encodeIfPresent(limit, forKey: .limit)
            try container.encodeIfPresent(cursor?.text, forKey: .cursor)
            if order != .id { try container.encode(order.rawValue, forKey: .order) }
        case .deadLetters(let limit, let cursor):
            try container.encodeIfPresent(limit, forKey: .limit)
            try container.encodeIfPresent(cursor?.text, forKey: .cursor)
        case .cancel(let filter):
            try encode(filter)
            if filter.isEmpty { try container.encode(true, forKey: .all) }
        case .retry(let firingId):
            try container.encode(firingId, forKey: .firingId)
        case .deleteDeadLetter(let firingId):
            try container.encode(firingId, forKey: .firingId)
        case .register(let recipient):
            try container.encode(recipient, forKey: .recipient)
        case .recipient(let id):
            try container.encode(id, forKey: .recipient)
        case .badge(let recipient, let value):
            try container.encode(recipient, forKey: .recipient)
            try container.encode(value, forKey: .value)
        case .ack(let firingId):
            try container.encode(firingId, forKey: .firingId)
        case .setEnabled(let ids, _, let recipient):
            try container.encode(ids, forKey: .ids)
            try container.encodeIfPresent(recipient, forKey: .recipient)
        case .delivered(let recipient, let remove, let limit, let cursor):
            try container.encode(recipient, forKey: .recipient)
            try container.encodeIfPresent(remove, forKey: .remove)
            try container.encodeIfPresent(limit, forKey: .limit)
            try container.encodeIfPresent(cursor?.text, forKey: .cursor)
        case .destinations(let recipient, let add, let remove):
            try container.encode(recipient, forKey: .recipient)
            if !add.isEmpty { try container.encode(add, forKey: .add) }
            if !remove.isEmpty { try container.encode(remove, forKey: .remove) }
        case .act(let firingId, let action, let text, let token, let snoozeSeconds):
            try container.encode(firingId, forKey: .firingId)
            try container.encode(action, forKey: .action)
            try container.encodeIfPresent(text, forKey: .text)
            try container.encodeIfPresent(token, forKey: .token)
            try container.encodeIfPresent(snoozeSeconds, forKey: .snooze)
        case .job(let jobId):
            try container.encode(jobId, forKey: .jobId)
        case .move(let move):
            try move.encode(to: encoder)
        case .trigger(let command):
            try command.encode(to: encoder)
        case .events(let after, let recipient, let limit, let cursor):
            if let cursor {
                try container.encode(cursor.text, forKey: .cursor)
            } else {
                try container.encode(after, forKey: .after)
            }
            try container.encodeIfPresent(recipient, forKey: .recipient)
            try container.encodeIfPresent(limit, forKey: .limit)
        case .status, .workers, .stats, .ping, .snapshot, .compact, .store, .map:
            break
        }
    }
}

extension ControlRequest.Command {
    /// Whether this is a `delivered` request that removes a firing (a change, unlike a listing).
    public var isDeliveredRemoval: Bool {
        if case .delivered(_, let remove, _, _) = self { return remove != nil }
        return false
    }
}
