import ChimeCore
import ChimeWire
import Foundation

extension ClusterClient {
    /// Schedules `reminders`, split by their recipients' shards: one `schedule` request per
    /// shard (all with the same `requestId`, so a retried request is applied once on each),
    /// the replies merged in the caller's order.
    ///
    /// Not atomic across shards: when one shard refuses its part, the other shards' parts
    /// may already be scheduled; the error's `field` (`reminders[k]…`) names the reminder by
    /// its index in `reminders`. Reminders with their own ids make a resend harmless
    /// (scheduling an id again replaces it).
    /// - Returns: the merged reply (`scheduled` in the caller's order, every shard's warnings).
    /// - Throws: `WireError`: the first refusal (field re-indexed to `reminders`),
    ///   `.unavailable` when a shard did not answer.
    public func schedule(_ reminders: [Reminder], requestId: String? = nil) throws(WireError) -> ControlReply<ScheduleResult> {
        let requestId = requestId ?? UUID().uuidString
        // One recipient and no map yet: one round trip (`exchange` asks for the map only on
        // `wrong_shard`).
        if isOneRequestWithoutMap(reminders.map(\.recipient)) {
            return try send(ControlRequest(requestId: requestId, command: .schedule(reminders)), expecting: ScheduleResult.self).reply
        }
        let groups = try shardGroups(of: reminders.map(\.recipient))
        if groups.count <= 1 {
            return try send(ControlRequest(requestId: requestId, command: .schedule(reminders)), expecting: ScheduleResult.self).reply
        }
        var items = [ScheduleResult.Item?](repeating: nil, count: reminders.count)
        var warnings: [String] = []
        for group in groups {
            let part = group.indices.map { reminders[$0] }
            let body = codec.encode(ControlRequest(requestId: requestId, command: .schedule(part)))
            let data = try exchange(body, routing: part[0].recipient)
            let reply = try codec.decode(ControlReply<ScheduleResult>.self, from: data)
            guard reply.ok, let result = reply.result, result.scheduled.count == part.count else {
                var error = reply.error ?? WireError(.malformed, "shard \(group.shard) answered \(reply.result?.scheduled.count ?? 0) items for \(part.count) reminders")
                error.field = Self.reindexed(error.field, by: group.indices)
                throw error
            }
            for (position, index) in group.indices.enumerated() { items[index] = result.scheduled[position] }
            warnings += reply.warnings ?? []
        }
        return ControlReply(
            requestId: requestId, result: ScheduleResult(scheduled: items.compactMap { $0 }),
            warnings: warnings.isEmpty ? nil : warnings)
    }

    /// The indices of `recipients` grouped by shard, in order of each shard's first index.
    /// - Throws: `WireError` as ``currentMap()``.
    public func shardGroups(of recipients: [RecipientID]) throws(WireError) -> [(shard: Int, indices: [Int])] {
        var order: [Int] = []
        var groups: [Int: [Int]] = [:]
        for (index, recipient) in recipients.enumerated() {
            let shard = try shard(of: recipient)
            if groups[shard] == nil { order.append(shard) }
            groups[shard, default: []].append(index)
        }
        return order.map { ($0, groups[$0] ?? []) }
    }

    /// `reminders[k]…` of a part re-indexed to the whole request (`reminders[indices[k]]…`);
    /// a one-reminder part's `reminder…` likewise; any other field unchanged.
    static func reindexed(_ field: String?, by indices: [Int]) -> String? {
        guard let field else { return nil }
        if indices.count == 1, field == "reminder" || field.hasPrefix("reminder.") {
            return "reminders[\(indices[0])]" + field.dropFirst("reminder".count)
        }
        guard field.hasPrefix("reminders["), let close = field.firstIndex(of: "]"),
            let position = Int(field[field.index(field.startIndex, offsetBy: 10)..<close]), indices.indices.contains(position)
        else { return field }
        return "reminders[\(indices[position])]" + field[close...].dropFirst()
    }
}
