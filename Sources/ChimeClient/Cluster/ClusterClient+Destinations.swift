import ChimeCore
import ChimeWire
import Foundation

/// A recipient's delivery destinations (issue 39): webhooks, APNs devices, FCM registrations.
extension ClusterClient {
    /// Adds `add` to `recipient`'s destinations (one with a held key replaces it) and removes
    /// the destinations whose key (`webhook:<url>`, `apns:<token>`, `fcm:<token>`) is in `remove`, keeping the rest of the
    /// registration; sent to the recipient's shard.
    ///
    /// ```swift
    /// let hook = Destination.webhook(WebhookDestination(url: "https://hooks.example.com/chime", secrets: [secret]))
    /// let result = try client.changeDestinations(of: "alice", add: [hook])
    /// ```
    /// - Returns: the recipient, its secrets and tokens masked.
    /// - Throws: `WireError`: `invalid_argument` (a destination that does not validate, more
    ///   than 16), `not_found` (a key in `remove` not held), `quota_exceeded`, `.unavailable`.
    public func changeDestinations(
        of recipient: RecipientID, add: [Destination] = [], remove: [String] = [], requestId: String? = nil
    ) throws(WireError) -> RecipientResult {
        let request = ControlRequest(requestId: requestId ?? UUID().uuidString, command: .destinations(recipient, add: add, remove: remove))
        let (reply, _) = try send(request, expecting: RecipientResult.self)
        guard let result = reply.result else { throw WireError(.malformed, "the reply has no result") }
        return result
    }

    /// The registered recipient with its destinations (secrets and tokens masked), badge and
    /// delivered count; sent to the recipient's shard.
    /// - Throws: `WireError`: `not_found` for a recipient not registered, `.unavailable`.
    public func recipient(_ recipient: RecipientID) throws(WireError) -> RecipientResult {
        let (reply, _) = try send(ControlRequest(command: .recipient(recipient)), expecting: RecipientResult.self)
        guard let result = reply.result else { throw WireError(.malformed, "the reply has no result") }
        return result
    }
}
