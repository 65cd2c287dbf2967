import ChimeCore
import Foundation

/// The control operations of the triggers beyond the clock (issue 41), carried by
/// `ControlRequest.Command.trigger`. Each names one reminder of one recipient (its routing
/// key), so a cluster client sends it to that recipient's shard.
public enum TriggerCommand: Sendable, Hashable {
    /// `triggerNow`: fire the reminder once now, without moving its schedule (Temporal's
    /// "trigger immediately"): `{"op": "triggerNow", "recipient", "id"}`.
    case fireNow(ReminderID, recipient: RecipientID)
    /// `backfill`: fire the occurrences whose fire instants lie in `from...to` (UTC, inclusive,
    /// before now), each once: occurrences a backfill covered already, and firings Chime still
    /// knows (unsettled, dead-lettered, in the delivered list or the event log), are not
    /// fired again. At most ``TriggerCommand/maximumBackfill`` occurrences a request.
    /// `{"op": "backfill", "recipient", "id", "from", "to"}`.
    case backfill(ReminderID, recipient: RecipientID, from: Date, to: Date)
    /// `remaining`: set how many occurrences the reminder has left (`count`: 0 finishes it,
    /// `null` removes the limit): `{"op": "remaining", "recipient", "id", "count"}`.
    case setRemaining(ReminderID, recipient: RecipientID, count: Int?)

    /// The most occurrences one `backfill` fires (more is `too_large`: split the range).
    public static let maximumBackfill = 1_000
    /// The largest remaining count (a COUNT's own bound).
    public static let maximumRemaining = 100_000

    /// The operation name.
    public var operation: ControlOperation {
        switch self {
        case .fireNow: .triggerNow
        case .backfill: .backfill
        case .setRemaining: .remaining
        }
    }

    /// The one recipient the command is about.
    public var recipient: RecipientID {
        switch self {
        case .fireNow(_, let recipient), .backfill(_, let recipient, _, _), .setRemaining(_, let recipient, _): recipient
        }
    }

    /// The reminder the command names.
    public var reminder: ReminderKey {
        switch self {
        case .fireNow(let id, let recipient), .backfill(let id, let recipient, _, _), .setRemaining(let id, let recipient, _):
            ReminderKey(id, of: recipient)
        }
    }

    /// The operations this type decodes.
    public static let operations: Set<ControlOperation> = [.triggerNow, .backfill, .remaining]

    private enum CodingKeys: String, CodingKey {
        case id, recipient, from, to, count
    }

    /// Decodes the arguments of `operation` (one of ``operations``) from a request object.
    /// - Throws: `DecodingError` for a missing or malformed argument; `WireError`
    ///   `.invalidArgument` for a range that ends before it starts or a count out of range.
    public init(operation: ControlOperation, from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id = try container.decode(ReminderID.self, forKey: .id)
        let recipient = try container.decode(RecipientID.self, forKey: .recipient)
        switch operation {
        case .backfill:
            func instant(_ key: CodingKeys) throws -> Date {
                let text = try container.decode(String.self, forKey: key)
                do {
                    return try RFC3339.parseInstant(text)
                } catch {
                    throw WireError(.invalidArgument, "\(key.stringValue) must be an RFC 3339 instant: \(error.message)", field: key.stringValue)
                }
            }
            let from = try instant(.from)
            let to = try instant(.to)
            guard from <= to else { throw WireError(.invalidArgument, "from must not be after to", field: "to") }
            self = .backfill(id, recipient: recipient, from: from, to: to)
        case .remaining:
            let count = try container.decodeNumberIfPresent(Int.self, forKey: .count, expected: "a whole number ≥ 0 or null")
            if let count, !(0...Self.maximumRemaining).contains(count) {
                throw WireError(.invalidArgument, "count must be 0 to \(Self.maximumRemaining), or null for no limit", field: "count")
            }
            guard container.contains(.count) else {
                throw WireError(.invalidArgument, "remaining needs \"count\" (a number, or null for no limit)", field: "count")
            }
            self = .setRemaining(id, recipient: recipient, count: count)
        default:
            self = .fireNow(id, recipient: recipient)
        }
    }

    /// Encodes the arguments into the request object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(reminder.id, forKey: .id)
        try container.encode(recipient, forKey: .recipient)
        switch self {
        case .fireNow: break
        case .backfill(_, _, let from, let to):
            try container.encode(RFC3339.format(from), forKey: .from)
            try container.encode(RFC3339.format(to), forKey: .to)
        case .setRemaining(_, _, let count):
            if let count { try container.encode(count, forKey: .count) } else { try container.encodeNil(forKey: .count) }
        }
    }
}

/// The result of `triggerNow`: the firing made.
public struct TriggerNowResult: Codable, Hashable, Sendable {
    /// The firing's id (`<recipient>/<id>@<now>`).
    public var firingId: FiringID
    /// Creates the value from its fields.
    public init(firingId: FiringID) { self.firingId = firingId }
}

/// The result of `backfill`: the firings made, and how many occurrences of the range were
/// left out because they had fired already.
public struct BackfillResult: Codable, Hashable, Sendable {
    /// The firings made, oldest first.
    public var fired: [FiringID]
    /// Occurrences of the range not fired again: covered by an earlier backfill, or a firing
    /// Chime still knows.
    public var alreadyFired: Int
    /// Creates the value from its fields.
    public init(fired: [FiringID], alreadyFired: Int) {
        self.fired = fired
        self.alreadyFired = alreadyFired
    }
}

/// The result of `remaining`: the reminder's state and count afterwards.
public struct RemainingResult: Codable, Hashable, Sendable {
    /// The reminder.
    public var id: ReminderID
    /// Its occurrences left (`nil`: no limit set; a COUNT rule still ends it).
    public var remaining: Int?
    /// Its state afterwards.
    public var state: ReminderState
    /// Its next fire instant (UTC), if any.
    public var nextFireAt: Date?
    /// Creates the value from its fields.
    public init(id: ReminderID, remaining: Int?, state: ReminderState, nextFireAt: Date?) {
        self.id = id
        self.remaining = remaining
        self.state = state
        self.nextFireAt = nextFireAt
    }
}

/// The result of a ``TriggerCommand`` (or of the trigger operations added beside it), as
/// one value for the coordinator's outcome.
public enum TriggerResult: Hashable, Sendable {
    case firedNow(TriggerNowResult)
    case backfilled(BackfillResult)
    case remaining(RemainingResult)

    /// The reply's JSON bytes, `requestId` echoed.
    public func encodedReply(requestId: String?) -> Data {
        switch self {
        case .firedNow(let result): WireCodec().encode(ControlReply(requestId: requestId, result: result))
        case .backfilled(let result): WireCodec().encode(ControlReply(requestId: requestId, result: result))
        case .remaining(let result): WireCodec().encode(ControlReply(requestId: requestId, result: result))
        }
    }
}
