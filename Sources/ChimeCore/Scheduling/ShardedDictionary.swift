/// A dictionary split into a fixed number of dictionaries (shards) picked by the key's hash,
/// so that copy-on-write copies only the shards a change touches.
///
/// The coordinator hands a copy of its state (a value of copy-on-write collections) to the
/// snapshot thread; the loop's next change to a collection shared with that copy then copies
/// it. One `Dictionary` of 300,000 reminders took the loop 67–129 ms to copy (release build,
/// 2 shared cores); split 256 ways, a change copies one shard of about 1,200 (4,000 at a
/// million), and the copies spread over the turns that make changes. Each access hashes the
/// key twice (the shard, then the shard's own lookup), so a small table should use one shard
/// and a big one a cheap `shardHash` (such as `StringIdentifier.shardHash`).
///
/// Iteration visits the shards in order, each in its own (unspecified) order.
public struct ShardedDictionary<Key: Hashable, Value>: Sequence {
    @usableFromInline var shards: [[Key: Value]]
    @usableFromInline var storedCount = 0
    /// Picks a key's shard (modulo the shard count); `nil`: the key's `hashValue`.
    @usableFromInline let shardHash: (@Sendable (Key) -> UInt)?

    /// How many keys there are.
    @inlinable public var count: Int { storedCount }

    /// An empty dictionary of `shardCount` shards (at least 1), a key's shard picked by
    /// `shardHash` (by default the key's `hashValue`, a second full hash per access).
    @inlinable
    public init(shardCount: Int = 1, shardHash: (@Sendable (Key) -> UInt)? = nil) {
        shards = [[Key: Value]](repeating: [:], count: Swift.max(1, shardCount))
        self.shardHash = shardHash
    }

    /// The shard `key` lives in: a caller that keeps it (as `IndexedHeap` does with each
    /// entry) can skip the second hashing with `subscript(_:inShard:)`.
    @inlinable
    public func shard(of key: Key) -> Int {
        guard shards.count > 1 else { return 0 }
        return Int((shardHash?(key) ?? UInt(bitPattern: key.hashValue)) % UInt(shards.count))
    }

    /// The value of `key`, which lives in `shard` (`shard(of: key)`); setting it (never to
    /// `nil`: use `removeValue`) replaces an existing value.
    /// - Precondition: `shard == shard(of: key)` and, when setting, `key` is present
    ///   (programmer errors; no outside bytes choose either).
    @inlinable
    public subscript(key: Key, inShard shard: Int) -> Value? {
        get { shards[shard][key] }
        set { shards[shard][key] = newValue }
    }

    /// The value of `key`; setting `nil` removes it.
    @inlinable
    public subscript(key: Key) -> Value? {
        get { shards[shard(of: key)][key] }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Sets the value of `key`; returns the value it replaced, if any.
    @inlinable
    @discardableResult
    public mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        let old = shards[shard(of: key)].updateValue(value, forKey: key)
        if old == nil { storedCount += 1 }
        return old
    }

    /// Removes `key`; returns its value, if it had one.
    @inlinable
    @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        let old = shards[shard(of: key)].removeValue(forKey: key)
        if old != nil { storedCount -= 1 }
        return old
    }

    /// Whether there are no keys.
    @inlinable public var isEmpty: Bool { storedCount == 0 }

    /// Every value, shard by shard.
    @inlinable
    public var values: LazyMapSequence<FlattenSequence<[[Key: Value]]>, Value> { shards.joined().lazy.map(\.value) }

    /// Every key, shard by shard.
    @inlinable
    public var keys: LazyMapSequence<FlattenSequence<[[Key: Value]]>, Key> { shards.joined().lazy.map(\.key) }

    /// Room for `capacity` keys in all, spread evenly over the shards.
    @inlinable
    public mutating func reserveCapacity(_ capacity: Int) {
        let perShard = capacity / shards.count + 1
        for index in shards.indices { shards[index].reserveCapacity(perShard) }
    }

    /// Every (key, value) pair, shard by shard.
    @inlinable
    public func makeIterator() -> FlattenSequence<[[Key: Value]]>.Iterator { shards.joined().makeIterator() }
}

extension ShardedDictionary: Sendable where Key: Sendable, Value: Sendable {}

extension ShardedDictionary: Equatable where Value: Equatable {
    /// Equal when they hold the same keys with equal values (however sharded).
    @inlinable
    public static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.allSatisfy { rhs[$0.key] == $0.value }
    }
}
