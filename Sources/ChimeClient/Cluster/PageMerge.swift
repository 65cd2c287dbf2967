import ChimeWire

/// Merges one page from each shard into one page in key order (a k-way merge), and says
/// where each shard goes on. Pure.
///
/// Each shard answered up to `limit` items after its position, in key order, and either
/// finished (`frontier` `nil`) or stopped with its own next cursor at `frontier` (the last
/// key it examined; nothing at or below it is left on that shard). Only items at or below
/// the lowest frontier `F` are certain to be in global order, so the page is the first
/// `limit` of those; the boundary `B` is the page's last key when it was cut at `limit`,
/// else `F`. Every shard then continues after `min(B, its frontier)`, or is done when it
/// finished and every item it sent is on the page. Keys are distinct across shards (a
/// recipient lives on one shard), so every item is listed exactly once.
public enum PageMerge {
    /// One shard's page.
    public struct ShardPage<Key: Comparable, Item> {
        /// The shard id.
        public var shard: Int
        /// Its items with their keys, in key order.
        public var items: [(key: Key, item: Item)]
        /// Its next cursor's key, or `nil` when it finished.
        public var frontier: Key?

        /// Creates the value from its fields (see each property for meaning).
        public init(shard: Int, items: [(key: Key, item: Item)], frontier: Key?) {
            self.shard = shard
            self.items = items
            self.frontier = frontier
        }
    }

    /// A shard's position after the merged page.
    public enum Next<Key> {
        /// Continue after this key.
        case after(Key)
        /// Every item listed.
        case done
    }

    /// Merges `pages` into one page of at most `limit` items.
    /// - Returns: the page in key order and each asked shard's next position.
    public static func merge<Key: Comparable, Item>(_ pages: [ShardPage<Key, Item>], limit: Int)
        -> (items: [Item], next: [Int: Next<Key>])
    {
        let lowestFrontier = pages.compactMap(\.frontier).min()
        var eligible = pages.flatMap { page in
            page.items.filter { entry in lowestFrontier.map { entry.key <= $0 } ?? true }
        }
        eligible.sort { $0.key < $1.key }
        let isCut = eligible.count > limit
        let taken = Array(eligible.prefix(max(0, limit)))
        let boundary: Key? = isCut ? taken.last?.key : lowestFrontier
        var next: [Int: Next<Key>] = [:]
        for page in pages {
            guard let boundary else {
                // Nothing cut and every shard finished: all was taken.
                next[page.shard] = .done
                continue
            }
            if page.frontier == nil, (page.items.last.map { $0.key <= boundary } ?? true) {
                next[page.shard] = .done
            } else if let frontier = page.frontier, frontier <= boundary {
                next[page.shard] = .after(frontier)
            } else {
                next[page.shard] = .after(boundary)
            }
        }
        return (taken.map(\.item), next)
    }
}

extension PageMerge.Next: Equatable where Key: Equatable {}
