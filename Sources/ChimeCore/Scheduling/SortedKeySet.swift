/// A set of keys kept in ascending order, for key-ordered paging: "the next `n` keys after
/// `k`" costs O(log N + n) however many keys the set holds.
///
/// Stored as a sorted array of sorted chunks of at most ``maximumChunkCount`` keys (the shape
/// of Python's `sortedcontainers.SortedList`): an insert or removal binary-searches the chunk
/// and moves at most one chunk's keys, so a million keys cost about 1 µs an insert and no
/// sort ever runs over the whole set.
///
/// Invariants: every chunk is non-empty and sorted; the last key of each chunk is below the
/// first key of the next; no key appears twice.
///
/// The lookups and edits are `@inlinable`, so the coordinator's module specializes them for
/// its key type (unspecialized, a generic insert spent as long on type metadata and witness
/// calls as on the search: 7 % of the loop thread's time in a bulk ingest).
public struct SortedKeySet<Key: Comparable>: Sequence {
    /// Keys per chunk at most; a fuller chunk splits in two.
    public static var maximumChunkCount: Int { 512 }

    @usableFromInline var chunks: [[Key]] = []
    /// The last key of each chunk, for the binary search over chunks.
    @usableFromInline var chunkMaxima: [Key] = []

    /// How many keys the set holds.
    @inlinable public var count: Int { keyCount }

    @usableFromInline var keyCount = 0

    /// An empty set.
    public init() {}

    /// A set of `keys` (in any order; duplicates are kept once): one sort, O(N log N).
    public init<Keys: Sequence>(_ keys: Keys) where Keys.Element == Key {
        var sorted = keys.sorted()
        var write = 0
        for key in sorted where write == 0 || sorted[write - 1] != key {
            sorted[write] = key
            write += 1
        }
        sorted.removeSubrange(write...)
        keyCount = sorted.count
        let half = Self.maximumChunkCount / 2
        var start = 0
        while start < sorted.count {
            let end = Swift.min(start + half, sorted.count)
            chunks.append(Array(sorted[start..<end]))
            chunkMaxima.append(sorted[end - 1])
            start = end
        }
    }

    /// How many keys each chunk's buffer has room for, in order (for tests of its memory).
    var chunkCapacities: [Int] { chunks.map(\.capacity) }

    /// Whether the set holds no key.
    @inlinable public var isEmpty: Bool { keyCount == 0 }

    /// Whether `key` is in the set.
    @inlinable public func contains(_ key: Key) -> Bool {
        let chunk = chunkIndex(forInserting: key)
        guard chunk < chunks.count else { return false }
        let position = Self.firstIndex(notBelow: key, in: chunks[chunk])
        return position < chunks[chunk].count && chunks[chunk][position] == key
    }

    /// Adds `key`.
    /// - Returns: whether it was not in the set before.
    @inlinable @discardableResult
    public mutating func insert(_ key: Key) -> Bool {
        if chunks.isEmpty {
            chunks = [[key]]
            chunkMaxima = [key]
            keyCount = 1
            return true
        }
        // A key above every other goes into the last chunk.
        let chunk = Swift.min(chunkIndex(forInserting: key), chunks.count - 1)
        let position = Self.firstIndex(notBelow: key, in: chunks[chunk])
        if position < chunks[chunk].count && chunks[chunk][position] == key { return false }
        chunks[chunk].insert(key, at: position)
        keyCount += 1
        if position == chunks[chunk].count - 1 { chunkMaxima[chunk] = key }
        if chunks[chunk].count > Self.maximumChunkCount {
            // Both halves are copied to buffers of their own size: the lower half left in the
            // buffer that grew past the maximum would keep twice that capacity for good
            // (32.5 against 19.0 bytes a key at a million `ReminderKey`s).
            let upper = Array(chunks[chunk][(Self.maximumChunkCount / 2)...])
            chunks[chunk] = Array(chunks[chunk][..<(Self.maximumChunkCount / 2)])
            chunkMaxima[chunk] = chunks[chunk][chunks[chunk].count - 1]
            chunks.insert(upper, at: chunk + 1)
            chunkMaxima.insert(upper[upper.count - 1], at: chunk + 1)
        }
        return true
    }

    /// Takes `key` out.
    /// - Returns: whether it was in the set.
    @inlinable @discardableResult
    public mutating func remove(_ key: Key) -> Bool {
        let chunk = chunkIndex(forInserting: key)
        guard chunk < chunks.count else { return false }
        let position = Self.firstIndex(notBelow: key, in: chunks[chunk])
        guard position < chunks[chunk].count && chunks[chunk][position] == key else { return false }
        chunks[chunk].remove(at: position)
        keyCount -= 1
        if chunks[chunk].isEmpty {
            chunks.remove(at: chunk)
            chunkMaxima.remove(at: chunk)
        } else if position == chunks[chunk].count {
            chunkMaxima[chunk] = chunks[chunk][position - 1]
        }
        return true
    }

    /// The keys above `after` (all keys when `nil`) in ascending order, as a lazy walk:
    /// finding the start costs O(log N), each further key O(1).
    public func keys(after: Key?) -> Walk {
        guard let after else { return Walk(chunks: chunks, chunk: 0, position: 0) }
        let chunk = chunkIndex(forInserting: after)
        guard chunk < chunks.count else { return Walk(chunks: chunks, chunk: chunks.count, position: 0) }
        var position = Self.firstIndex(notBelow: after, in: chunks[chunk])
        if position < chunks[chunk].count && chunks[chunk][position] == after { position += 1 }
        return Walk(chunks: chunks, chunk: chunk, position: position)
    }

    /// Every key in ascending order.
    public func makeIterator() -> Walk { keys(after: nil) }

    /// A walk over the keys in ascending order from some point.
    public struct Walk: Sequence, IteratorProtocol {
        fileprivate let chunks: [[Key]]
        fileprivate var chunk: Int
        fileprivate var position: Int

        /// The next key, or `nil` past the last.
        public mutating func next() -> Key? {
            while chunk < chunks.count {
                if position < chunks[chunk].count {
                    defer { position += 1 }
                    return chunks[chunk][position]
                }
                chunk += 1
                position = 0
            }
            return nil
        }
    }

    /// The first chunk whose last key is not below `key` (`chunks.count` when none is).
    @inlinable func chunkIndex(forInserting key: Key) -> Int {
        var low = 0
        var high = chunkMaxima.count
        while low < high {
            let middle = (low + high) / 2
            if chunkMaxima[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The first position in the sorted `chunk` whose key is not below `key`.
    @inlinable static func firstIndex(notBelow key: Key, in chunk: [Key]) -> Int {
        var low = 0
        var high = chunk.count
        while low < high {
            let middle = (low + high) / 2
            if chunk[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

extension SortedKeySet: Sendable where Key: Sendable {}
extension SortedKeySet.Walk: Sendable where Key: Sendable {}

extension SortedKeySet: Equatable {
    /// Equal when both hold the same keys (however they are chunked).
    public static func == (lhs: SortedKeySet, rhs: SortedKeySet) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }
}
