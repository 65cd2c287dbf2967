import ChimeCore
import ChimeWire
import Foundation
import Testing

@testable import ChimeClient

/// `list --order next-fire` across shards (issue 42): shards' pages in next-fire order,
/// merged by the client as key order is (``PageMerge``), list every reminder once, in order.
@Suite struct NextFireMergeTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)

    static func listing(_ id: String, of recipient: RecipientID, in seconds: Double?) -> ReminderListing {
        ReminderListing(
            reminder: Reminder(
                id: ReminderID(id), recipient: recipient, content: Content(body: id),
                trigger: Trigger(start: .instant(t0.addingTimeInterval(seconds ?? 0)))),
            state: seconds == nil ? .delivered : .pending, nextFireAt: seconds.map { t0.addingTimeInterval($0) }, deliveredCount: 0,
            lastFiredAt: nil)
    }

    /// A shard's page of at most `limit` after `after`, in next-fire order, with its frontier
    /// (what a coordinator answers: the last place it examined when more are left).
    static func page(_ shard: [ReminderListing], after: NextFireKey?, limit: Int) -> (items: [(NextFireKey, ReminderListing)], frontier: NextFireKey?) {
        let sorted = shard.map { (ClusterClient.nextFirePlace(of: $0), $0) }.sorted { $0.0 < $1.0 }
        let rest = sorted.filter { place in after.map { place.0 > $0 } ?? true }
        let taken = Array(rest.prefix(limit))
        return (taken, rest.count > limit ? taken.last?.0 : nil)
    }

    @Test func shardsMergeIntoOneNextFireOrder() {
        let shards: [Int: [ReminderListing]] = [
            0: [Self.listing("a", of: "alice", in: 300), Self.listing("b", of: "alice", in: 60), Self.listing("z", of: "alice", in: nil)],
            1: [Self.listing("a", of: "bob", in: 60), Self.listing("c", of: "bob", in: 120), Self.listing("y", of: "bob", in: nil)],
            2: [Self.listing("m", of: "carol", in: 120), Self.listing("n", of: "carol", in: 30)],
        ]
        var positions: [Int: PageMerge.Next<NextFireKey>?] = [0: nil, 1: nil, 2: nil]
        var listed: [String] = []
        var rounds = 0
        while positions.values.contains(where: { if case .done? = $0 { false } else { true } }), rounds < 20 {
            rounds += 1
            var pages: [PageMerge.ShardPage<NextFireKey, ReminderListing>] = []
            for (shard, position) in positions.sorted(by: { $0.key < $1.key }) {
                let after: NextFireKey?
                switch position {
                case .done?: continue
                case .after(let key)?: after = key
                case nil: after = nil
                }
                let answered = Self.page(shards[shard] ?? [], after: after, limit: 2)
                pages.append(PageMerge.ShardPage(shard: shard, items: answered.items.map { ($0.0, $0.1) }, frontier: answered.frontier))
            }
            let merged = PageMerge.merge(pages, limit: 3)
            listed += merged.items.map { "\($0.reminder.recipient.rawValue)/\($0.reminder.id.rawValue)" }
            for (shard, next) in merged.next { positions[shard] = next }
        }
        // Ties by key: id, then recipient (bob/a before alice/b at +60 s).
        #expect(listed == ["carol/n", "bob/a", "alice/b", "bob/c", "carol/m", "alice/a", "bob/y", "alice/z"])
    }
}
