import ChimeCore
import Foundation

/// Topics of the event stream (the first frame of every event message).
///
/// SUB sockets filter by prefix: subscribe to `fire.alice` for one recipient, `fire.` for
/// every fire event, or the empty string for everything.
public enum Topic {
    /// `fire.<recipient>`: a firing was delivered.
    public static func fire(_ recipient: RecipientID) -> String { "fire.\(recipient.rawValue)" }
    /// The prefix that matches every fire event.
    public static let firePrefix = "fire."
}

/// A delivered firing as subscribers see it: frame 2 of `[topic, JSON]`.
///
/// JSON shape (keys sorted): `{"type": "fire", "seq": 7, "publisher": "host-123",
/// "firingId", "reminderId", "recipient", "dueAt", "firedAt", "attempt", "late", "missed" (a late firing only), "title",
/// "body", "action", "launchImage", "sound", "badge", "userInfo", "category", "threadId",
/// "subtitle", "interruptionLevel", "relevanceScore", "targetContentIdentifier",
/// "filterCriteria", "hasAction", "unhandled", "collapseKey", "attachments", "titleKey", "titleArgs",
/// "bodyKey", "bodyArgs", "soundVolume", "throttled"}`; instants in RFC 3339 UTC with
/// milliseconds; absent content fields are omitted, and so are `interruptionLevel` `"active"`,
/// `hasAction` `true`, `unhandled` `"stack"` and `throttled` `"hold"` (the defaults). `interruptionLevel` is the level delivered, after the recipient's grants.
/// `title` and `body` are resolved from `titleKey` and `bodyKey` in the recipient's locale
/// (``StringTables``); the keys and their arguments come along. `seq` is
/// the coordinator's event sequence number, given at dispatch and unique per delivery
/// attempt (a redelivery gets a new one); `firingId` identifies the occurrence across
/// redeliveries. Missed events after a known `seq` are fetched with the `events` request.
/// In a cluster of several shards the event also carries `"shard": N`, the shard that
/// dispatched the firing and published the event (absent: shard 0); `seq` counts per shard.
public struct FireEvent: Hashable, Sendable {
    /// The coordinator's event sequence number of this delivery attempt, starting at 1.
    public var seq: UInt64
    /// The worker that delivered the firing.
    public var publisher: WorkerID
    /// The delivered firing (content included).
    public var firing: Firing
    /// When the worker delivered it (UTC).
    public var firedAt: Date
    /// The shard that dispatched the firing, in a cluster of several shards; `nil` (absent
    /// in JSON): shard 0.
    public var shard: Int?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(seq: UInt64, publisher: WorkerID, firing: Firing, firedAt: Date) {
        self.seq = seq
        self.publisher = publisher
        self.firing = firing
        self.firedAt = firedAt
    }

    /// The event's topic, `fire.<recipient>`.
    public var topic: String { Topic.fire(firing.recipient) }
}

extension FireEvent: Codable {
    private enum CodingKeys: String, CodingKey {
        case type, seq, shard, publisher, firingId, reminderId, recipient, dueAt, firedAt, attempt, late, missed, eventAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        seq = try container.decode(UInt64.self, forKey: .seq)
        shard = try container.decodeIfPresent(Int.self, forKey: .shard)
        publisher = try container.decode(WorkerID.self, forKey: .publisher)
        firedAt = try container.decode(Date.self, forKey: .firedAt)
        let content = try Content(fieldsOf: decoder)
        var firing = Firing(
            reminderId: try container.decode(ReminderID.self, forKey: .reminderId),
            recipient: try container.decode(RecipientID.self, forKey: .recipient),
            dueAt: try container.decode(Date.self, forKey: .dueAt),
            content: content,
            attempt: try container.decodeIfPresent(Int.self, forKey: .attempt) ?? 1,
            late: try container.decodeIfPresent(Bool.self, forKey: .late) ?? false,
            missed: try container.decodeIfPresent(Int.self, forKey: .missed),
            eventAt: try container.decodeIfPresent(Date.self, forKey: .eventAt))
        firing.firingId = try container.decode(FiringID.self, forKey: .firingId)
        firing.seq = seq
        self.firing = firing
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("fire", forKey: .type)
        try container.encode(seq, forKey: .seq)
        try container.encodeIfPresent(shard, forKey: .shard)
        try container.encode(publisher, forKey: .publisher)
        try container.encode(firing.firingId, forKey: .firingId)
        try container.encode(firing.reminderId, forKey: .reminderId)
        try container.encode(firing.recipient, forKey: .recipient)
        try container.encode(firing.dueAt, forKey: .dueAt)
        try container.encode(firedAt, forKey: .firedAt)
        try container.encode(firing.attempt, forKey: .attempt)
        try container.encode(firing.late, forKey: .late)
        try container.encodeIfPresent(firing.missed, forKey: .missed)
        try container.encodeIfPresent(firing.eventAt, forKey: .eventAt)
        // The content's keys beside the event's own, as Content writes them (the same object).
        try firing.content.encode(to: encoder)
    }
}

/// Splits a control message's frames into the routing envelope and the JSON body.
///
/// A ROUTER receives `[identity, "", body]` from REQ and from DEALER clients that send the
/// empty delimiter, and `[identity, body]` from DEALERs that do not; the reply goes back with
/// the same envelope. ZeroMQ Guide ch. 3, "The Extended Reply Envelope".
public struct ControlEnvelope: Sendable {
    /// The frames to put before the reply body.
    public var routing: [Data]
    /// The request's JSON bytes.
    public var body: Data

    /// Parses the frames a ROUTER received.
    /// - Throws: `WireError` `.malformed`, carrying the best envelope for an error reply in
    ///   `routing` of the returned partial parse (see `replyRouting(for:)`).
    public static func parse(_ frames: [Data]) throws(WireError) -> ControlEnvelope {
        switch frames.count {
        case 2 where !frames[1].isEmpty:
            return ControlEnvelope(routing: [frames[0]], body: frames[1])
        case 3 where frames[1].isEmpty && !frames[2].isEmpty:
            return ControlEnvelope(routing: [frames[0], frames[1]], body: frames[2])
        default:
            let envelopeCount = frames.count > 1 && frames[1].isEmpty ? 2 : 1
            throw WireError(
                .malformed,
                "a control request is one non-empty JSON frame (after an optional empty delimiter); got \(max(0, frames.count - envelopeCount)) body frames")
        }
    }

    /// The envelope to answer a message that `parse` rejected: the identity, plus the
    /// empty delimiter if the client sent one (so REQ clients accept the error reply).
    public static func replyRouting(for frames: [Data]) -> [Data] {
        guard let identity = frames.first else { return [] }
        if frames.count > 1 && frames[1].isEmpty { return [identity, Data()] }
        return [identity]
    }
}
