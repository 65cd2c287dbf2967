import ChimeCore
import ChimeSecurity
import ChimeWire

/// A tenant's quota split among the shards, so the quota bounds the tenant's total across the
/// cluster without the shards exchanging counts (issue 37 item 3).
///
/// Each shard may hold at most its **allotment** of a limit: the shards, in id order, cut the
/// limit by their weights, shard *k* taking `⌊limit·W≤k / W⌋ − ⌊limit·W<k / W⌋` (`W<k` and
/// `W≤k` the weights of the shards before it and up to it, `W` all of them), so the
/// allotments add up to the limit exactly, whatever the rounding. The weights are the shards'
/// share of where the tenant's recipients can live:
/// - a scope of listed recipients only (`recipients = "alice, bob"`): how many of them each
///   shard owns (a key for one recipient has its whole quota on that recipient's shard);
/// - a scope with prefixes: how many slots each shard owns (recipient ids hash evenly over the
///   slots, so a tenant of many recipients spreads as the slots do).
///
/// Every shard computes the same split from the map it serves by. While the map is stable the
/// total is at most the limit. A slot move changes the allotments, and need not move the
/// tenant's reminders with them (slots of none of its recipients still carry weight): the
/// giving shard may then hold more than its new allotment, and is refused growth (never made to
/// shed) until it is under, as with a lowered quota, while the receiving shard may grow into
/// its larger one; until the giver shrinks, the total may exceed the limit by the giver's
/// excess. While two shards serve by maps of different epochs (the moment a move commits), the
/// moving slots' share may count on both. One shard (or no map): the whole limit.
enum QuotaAllotment {
    /// This shard's allotment of `limit` for `scope` under `ownership`.
    static func allotment(of limit: Int, for scope: RecipientScope, under ownership: ShardOwnership) -> Int {
        guard !ownership.ownsEverySlot, let map = ownership.map, limit > 0 else { return limit }
        var weights: [Int: Int] = [:]
        if scope.prefixes.isEmpty {
            for recipient in scope.recipients {
                if let owner = ownership.owner(of: RecipientID(recipient)) { weights[owner, default: 0] += 1 }
            }
        } else {
            for shard in map.shards {
                weights[shard.id, default: 0] += shard.slots.reduce(0) { sum, range in
                    sum + (range.first <= range.last ? range.last - range.first + 1 : 0)
                }
            }
        }
        return share(of: limit, weights: weights, for: ownership.shardID)
    }

    /// Shard `id`'s cut of `limit` by `weights` (shard id → weight ≥ 0), in id order as above;
    /// 0 for a shard of no weight, and when every weight is 0.
    static func share(of limit: Int, weights: [Int: Int], for id: Int) -> Int {
        let total = weights.values.reduce(0, +)
        guard total > 0, let own = weights[id], own > 0 else { return 0 }
        let before = weights.filter { $0.key < id }.values.reduce(0, +)
        return scaled(limit, before + own, total) - scaled(limit, before, total)
    }

    /// `⌊limit · part / total⌋` without overflow (0 ≤ part ≤ total, total > 0).
    private static func scaled(_ limit: Int, _ part: Int, _ total: Int) -> Int {
        let product = limit.multipliedFullWidth(by: part)
        return total.dividingFullWidth(product).quotient
    }
}
