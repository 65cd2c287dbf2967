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
    /// `locate`: the recipient was at `point` (`accuracy` metres, 0 when absent) at `at`
    /// (now when absent): `{"op": "locate", "recipient", "latitude", "longitude", "accuracy"?,
    /// "at"?}`. A report at or before the recipient's last one is ignored.
    case locate(RecipientID, point: GeoPoint, accuracy: Double, at: Date?)
    /// `setCalendar`: set (or replace) a named exclusion calendar on the shard that gets it
    /// (a cluster client sends it to every shard): `{"op": "setCalendar", "name", "calendar"}`.
    case setCalendar(name: String, calendar: ExclusionCalendar)
    /// `deleteCalendar`: delete a calendar (reminders naming it exclude nothing of it).
    case deleteCalendar(name: String)
    /// `calendars`: the shard's calendars (one with `name`), with how many reminders use each.
    case calendars(name: String?)

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
        case .locate: .locate
        case .setCalendar: .setCalendar
        case .deleteCalendar: .deleteCalendar
        case .calendars: .calendars
        }
    }

    /// The one recipient the command is about (`nil` for the calendar operations, which are
    /// about the shard).
    public var recipient: RecipientID? {
        switch self {
        case .fireNow(_, let recipient), .backfill(_, let recipient, _, _), .setRemaining(_, let recipient, _),
            .locate(let recipient, _, _, _):
            recipient
        case .setCalendar, .deleteCalendar, .calendars: nil
        }
    }

    /// The reminder the command names, if it names one.
    public var reminder: ReminderKey? {
        switch self {
        case .fireNow(let id, let recipient), .backfill(let id, let recipient, _, _), .setRemaining(let id, let recipient, _):
            ReminderKey(id, of: recipient)
        case .locate, .setCalendar, .deleteCalendar, .calendars: nil
        }
    }

    /// Whether it changes state (journaled, and applied once per `requestId`).
    public var isMutating: Bool {
        if case .calendars = self { return false }
        return true
    }

    /// The operations this type decodes.
    public static let operations: Set<ControlOperation> = [
        .triggerNow, .backfill, .remaining, .locate, .setCalendar, .deleteCalendar, .calendars,
    ]

    private enum CodingKeys: String, CodingKey {
        case id, recipient, from, to, count, latitude, longitude, accuracy, at, name, calendar
    }

    /// Decodes the arguments of `operation` (one of ``operations``) from a request object.
    /// - Throws: `DecodingError` for a missing or malformed argument; `WireError`
    ///   `.invalidArgument` for a range that ends before it starts or a count out of range.
    public init(operation: ControlOperation, from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch operation {
        case .locate:
            let recipient = try container.decode(RecipientID.self, forKey: .recipient)
            let point = GeoPoint(
                latitude: try container.decodeNumber(Double.self, forKey: .latitude, expected: "degrees"),
                longitude: try container.decodeNumber(Double.self, forKey: .longitude, expected: "degrees"))
            let accuracy = try container.decodeNumberIfPresent(Double.self, forKey: .accuracy, expected: "metres") ?? 0
            var at: Date?
            if let text = try container.decodeIfPresent(String.self, forKey: .at) {
                do { at = try RFC3339.parseInstant(text) } catch {
                    throw WireError(.invalidArgument, "at must be an RFC 3339 instant: \(error.message)", field: "at")
                }
            }
            do {
                try LocationReport(point: point, accuracy: accuracy, at: at ?? Trigger.unstarted).validate()
            } catch {
                throw WireError(.invalidArgument, error.message, field: error.field?.replacingOccurrences(of: "location.", with: ""))
            }
            self = .locate(recipient, point: point, accuracy: accuracy, at: at)
            return
        case .setCalendar, .deleteCalendar, .calendars:
            let name = try container.decodeIfPresent(String.self, forKey: .name)
            if let name {
                do { try Trigger.validateCalendarName(name, field: "name") } catch { throw WireError(.invalidArgument, error.message, field: "name") }
            }
            if operation == .calendars {
                self = .calendars(name: name)
                return
            }
            guard let name else { throw WireError(.invalidArgument, "\(operation.rawValue) needs a name", field: "name") }
            if operation == .deleteCalendar {
                self = .deleteCalendar(name: name)
                return
            }
            let calendar = try container.decode(ExclusionCalendar.self, forKey: .calendar)
            do { try calendar.validate() } catch { throw WireError(.invalidArgument, error.message, field: error.field) }
            self = .setCalendar(name: name, calendar: calendar)
            return
        default:
            break
        }
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
        try container.encodeIfPresent(reminder?.id, forKey: .id)
        try container.encodeIfPresent(recipient, forKey: .recipient)
        switch self {
        case .fireNow: break
        case .locate(_, let point, let accuracy, let at):
            try container.encode(point.latitude, forKey: .latitude)
            try container.encode(point.longitude, forKey: .longitude)
            if accuracy != 0 { try container.encode(accuracy, forKey: .accuracy) }
            try container.encodeIfPresent(at.map(RFC3339.format), forKey: .at)
        case .setCalendar(let name, let calendar):
            try container.encode(name, forKey: .name)
            try container.encode(calendar, forKey: .calendar)
        case .deleteCalendar(let name):
            try container.encode(name, forKey: .name)
        case .calendars(let name):
            try container.encodeIfPresent(name, forKey: .name)
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
    case located(LocateResult)
    case calendar(CalendarResult)
    case calendars(CalendarsResult)

    /// The reply's JSON bytes, `requestId` echoed.
    public func encodedReply(requestId: String?) -> Data {
        switch self {
        case .located(let result): WireCodec().encode(ControlReply(requestId: requestId, result: result))
        case .calendar(let result): WireCodec().encode(ControlReply(requestId: requestId, result: result))
        case .calendars(let result): WireCodec().encode(ControlReply(requestId: requestId, result: result))
        case .firedNow(let result): WireCodec().encode(ControlReply(requestId: requestId, result: result))
        case .backfilled(let result): WireCodec().encode(ControlReply(requestId: requestId, result: result))
        case .remaining(let result): WireCodec().encode(ControlReply(requestId: requestId, result: result))
        }
    }
}

/// The result of `locate`.
public struct LocateResult: Codable, Hashable, Sendable {
    /// The recipient.
    public var recipient: RecipientID
    /// Whether the report was taken (false: it was not later than the last one).
    public var accepted: Bool
    /// The region crossings it made, one per region reminder, in reminder-id order.
    public var crossings: [Crossing]

    /// One region reminder's crossing.
    public struct Crossing: Codable, Hashable, Sendable {
        /// The reminder.
        public var id: ReminderID
        /// `entry` or `exit`.
        public var crossing: RegionCrossing
        /// The firing made, when the reminder fires on this crossing (and is pending and on).
        public var firingId: FiringID?
        /// Creates the value from its fields.
        public init(id: ReminderID, crossing: RegionCrossing, firingId: FiringID?) {
            self.id = id
            self.crossing = crossing
            self.firingId = firingId
        }
    }

    /// Creates the value from its fields.
    public init(recipient: RecipientID, accepted: Bool, crossings: [Crossing]) {
        self.recipient = recipient
        self.accepted = accepted
        self.crossings = crossings
    }
}

/// The result of `setCalendar` and `deleteCalendar`: the calendar (absent once deleted) and
/// how many of the shard's reminders name it.
public struct CalendarResult: Codable, Hashable, Sendable {
    /// The calendar's name.
    public var name: String
    /// The calendar, or `nil` when deleted.
    public var calendar: ExclusionCalendar?
    /// The shard's reminders that name it (re-planned).
    public var reminders: Int
    /// Creates the value from its fields.
    public init(name: String, calendar: ExclusionCalendar?, reminders: Int) {
        self.name = name
        self.calendar = calendar
        self.reminders = reminders
    }
}

/// The result of `calendars`: the shard's calendars in name order.
public struct CalendarsResult: Codable, Hashable, Sendable {
    /// The calendars.
    public var calendars: [CalendarResult]
    /// Creates the value from its fields.
    public init(calendars: [CalendarResult]) { self.calendars = calendars }
}
