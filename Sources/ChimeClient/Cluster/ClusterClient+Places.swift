import ChimeCore
import ChimeWire
import Foundation

/// Location reports and the shared exclusion calendars (issue 41).
extension ClusterClient {
    /// Reports that `recipient` was at `point` (`accuracy` metres) at `at` (the coordinator's
    /// now when `nil`); sent to the recipient's shard.
    /// - Returns: whether it was taken and the region crossings it made.
    /// - Throws: `WireError`: `invalid_argument` (a place out of range, a time more than a
    ///   minute ahead), `.unavailable`.
    public func locate(_ recipient: RecipientID, at point: GeoPoint, accuracy: Double = 0, reportedAt at: Date? = nil, requestId: String? = nil)
        throws(WireError) -> LocateResult
    {
        let request = ControlRequest(requestId: requestId, command: .trigger(.locate(recipient, point: point, accuracy: accuracy, at: at)))
        let (reply, _) = try send(request, expecting: LocateResult.self)
        guard let result = reply.result else { throw WireError(.malformed, "the reply has no result") }
        return result
    }

    /// Sets (or replaces) calendar `name` on every shard of the map, with one `requestId` (a
    /// retry is applied once on each): each shard holds its own copy and re-plans its
    /// reminders that name it. Not atomic across shards: a shard that did not answer is in
    /// ``ShardReplies/missing``; send the same request again.
    /// - Throws: `WireError` as ``scatter(_:expecting:)``.
    public func setCalendar(_ name: String, _ calendar: ExclusionCalendar, requestId: String? = nil) throws(WireError)
        -> ShardReplies<CalendarResult>
    {
        try scatter(ControlRequest(requestId: requestId, command: .trigger(.setCalendar(name: name, calendar: calendar))), expecting: CalendarResult.self)
    }

    /// Deletes calendar `name` on every shard (see ``setCalendar(_:_:requestId:)``).
    /// - Throws: `WireError` as ``scatter(_:expecting:)`` (`not_found` when a shard lacks it).
    public func deleteCalendar(_ name: String, requestId: String? = nil) throws(WireError) -> ShardReplies<CalendarResult> {
        try scatter(ControlRequest(requestId: requestId, command: .trigger(.deleteCalendar(name: name))), expecting: CalendarResult.self)
    }

    /// Every shard's calendars (one with `name`).
    /// - Throws: `WireError` as ``scatter(_:expecting:)``.
    public func calendars(named name: String? = nil) throws(WireError) -> ShardReplies<CalendarsResult> {
        try scatter(ControlRequest(command: .trigger(.calendars(name: name))), expecting: CalendarsResult.self)
    }
}
