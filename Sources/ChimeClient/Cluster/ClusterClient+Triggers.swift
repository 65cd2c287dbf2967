import ChimeCore
import ChimeWire
import Foundation

/// The trigger operations (issue 41), each sent to its recipient's shard.
extension ClusterClient {
    /// Fires `recipient`'s reminder `id` once now, without moving its schedule (operator).
    /// - Throws: `WireError`: `not_found` for an unknown reminder, `.unavailable` when the
    ///   shard did not answer.
    public func triggerNow(_ id: ReminderID, of recipient: RecipientID, requestId: String? = nil) throws(WireError) -> TriggerNowResult {
        try result(of: ControlRequest(requestId: requestId, command: .trigger(.fireNow(id, recipient: recipient))))
    }

    /// Fires the occurrences of `recipient`'s reminder `id` whose fire instants lie in
    /// `from...to` (UTC, inclusive, clamped to now) and have not fired (operator).
    /// - Throws: `WireError`: `not_found`, `too_large` (more than 1,000 occurrences),
    ///   `invalid_argument`, `.unavailable`.
    public func backfill(_ id: ReminderID, of recipient: RecipientID, from: Date, to: Date, requestId: String? = nil)
        throws(WireError) -> BackfillResult
    {
        try result(of: ControlRequest(requestId: requestId, command: .trigger(.backfill(id, recipient: recipient, from: from, to: to))))
    }

    /// Sets how many occurrences `recipient`'s reminder `id` has left (`nil`: no limit;
    /// 0 finishes it) (operator).
    /// - Throws: `WireError`: `not_found`, `invalid_argument`, `.unavailable`.
    public func setRemaining(_ count: Int?, of id: ReminderID, recipient: RecipientID, requestId: String? = nil)
        throws(WireError) -> RemainingResult
    {
        try result(of: ControlRequest(requestId: requestId, command: .trigger(.setRemaining(id, recipient: recipient, count: count))))
    }

    private func result<Result: Codable & Sendable>(of request: ControlRequest) throws(WireError) -> Result {
        let (reply, _) = try send(request, expecting: Result.self)
        guard let result = reply.result else { throw WireError(.malformed, "the reply has no result") }
        return result
    }
}
