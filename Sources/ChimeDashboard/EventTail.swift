import Foundation
import Synchronization

/// One event the dashboard received from a shard's events endpoint.
public struct TailEvent: Codable, Hashable, Sendable {
    /// The dashboard's own sequence number (1, 2, …): pages poll for events after one.
    public var number: UInt64
    /// When the dashboard received it (UTC).
    public var receivedAt: Date
    /// The shard it came from.
    public var shard: Int
    /// `fire`, `badge` or `action` (the topic before its first dot).
    public var kind: String
    /// The recipient (the topic after its first dot).
    public var recipient: String
    /// The event's JSON as published, as text (bytes that are not UTF-8 become U+FFFD).
    public var json: String

    /// Creates the value from its fields.
    public init(number: UInt64, receivedAt: Date, shard: Int, kind: String, recipient: String, json: String) {
        self.number = number
        self.receivedAt = receivedAt
        self.shard = shard
        self.kind = kind
        self.recipient = recipient
        self.json = json
    }
}

/// The last ``capacity`` events received (a ring buffer: the oldest is dropped first).
public final class EventTail: Sendable {
    private struct State {
        var events: [TailEvent] = []
        var lastNumber: UInt64 = 0
    }

    private let state = Mutex(State())
    /// Events kept.
    public let capacity: Int
    /// The longest event JSON kept, in bytes; a longer one is cut (the page shows a summary).
    public static let maximumJSONBytes = 4096

    /// - Parameter capacity: events kept (at least 1).
    public init(capacity: Int = 1000) {
        self.capacity = max(1, capacity)
    }

    /// Adds an event published on `topic` (`fire.alice`, `badge.alice`, `action.alice`).
    public func append(topic: String, payload: Data, shard: Int, at now: Date = Date()) {
        let parts = topic.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let kind = String(parts[0])
        let recipient = parts.count > 1 ? String(parts[1]) : ""
        let json = String(decoding: payload.prefix(Self.maximumJSONBytes), as: UTF8.self)
        state.withLock { state in
            state.lastNumber += 1
            state.events.append(
                TailEvent(number: state.lastNumber, receivedAt: now, shard: shard, kind: kind, recipient: recipient, json: json))
            if state.events.count > capacity { state.events.removeFirst(state.events.count - capacity) }
        }
    }

    /// The events numbered above `after`, oldest first, of `recipient` alone when given, at
    /// most `limit` (the newest of them).
    public func events(after: UInt64, recipient: String?, limit: Int = 200) -> [TailEvent] {
        let matching = state.withLock { state in
            state.events.filter { $0.number > after && (recipient == nil || $0.recipient == recipient) }
        }
        return Array(matching.suffix(max(0, limit)))
    }

    /// The number of the newest event (0 before any).
    public var lastNumber: UInt64 { state.withLock { $0.lastNumber } }
}
