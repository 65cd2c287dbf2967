import ChimeCore
import Foundation

extension Topic {
    /// `destination.<recipient>`: a destination of the recipient was removed because its
    /// provider said it no longer exists.
    public static func destination(_ recipient: RecipientID) -> String { "destination.\(recipient.rawValue)" }
}

/// A destination removed from its recipient because the provider called it gone (HTTP 410,
/// APNs `BadDeviceToken`/`Unregistered`, FCM `UNREGISTERED`), published by the coordinator
/// on `destination.<recipient>` once the removal is durable.
///
/// JSON shape: `{"type": "destinationRemoved", "recipient": "alice", "destination":
/// "apns:a1b2c3d4…e5f6", "reason": "HTTP 410 …", "at": "…Z"}`, plus `"shard"` in a cluster of
/// several shards. `destination` is the key with its token masked
/// (``Destination/redactedKey``).
public struct DestinationRemovedEvent: Codable, Hashable, Sendable {
    /// Always `"destinationRemoved"`.
    public var type = "destinationRemoved"
    /// Whose destination it was.
    public var recipient: RecipientID
    /// The destination's key, token masked.
    public var destination: String
    /// What the provider answered (status and a bounded excerpt).
    public var reason: String
    /// When the coordinator removed it (UTC).
    public var at: Date
    /// The shard that published it, in a cluster of several shards; `nil` (absent): shard 0.
    public var shard: Int?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(recipient: RecipientID, destination: String, reason: String, at: Date) {
        self.recipient = recipient
        self.destination = destination
        self.reason = reason
        self.at = at
    }
}
