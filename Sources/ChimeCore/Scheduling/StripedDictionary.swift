/// A dictionary split into a fixed number of dictionaries (stripes) picked by the key's hash,
/// so that copy-on-write copies only the stripes a change touches.
///
/// The coordinator hands a copy of its state (a value of copy-on-write collections) to the
/// snapshot thread; the loop's next change to a collection shared with that copy then copies
/// it. One `Dictionary` of 300,000 reminders took the loop 67–129 ms to copy (release build,
/// 2 shared cores); split 256 ways, a change copies one stripe of about 1,200 (4,000 at a
/// million), and the copies spread over the turns that make changes. Each access hashes the
/// key twice (the stripe, then the stripe's own lookup), so a small table should use one stripe
/// and a big one a cheap `stripeHash` (such as `StringIdentifier.stripeHash`).
///
/// Iteration visits the stripes in order, each in its own (unspecified) order.
public struct StripedDictionary<Key: Hashable, Value>: Sequence {
    @usableFromInline var stripes: [[Key: Value]]
    @usableFromInline var storedCount = 0
    /// Picks a key's stripe (modulo the stripe count); `nil`: the key's `hashValue`.
    @usableFromInline let stripeHash: (@Sendable (Key) -> UInt)?

    /// How many keys there are.
    @inlinable public var count: Int { storedCount }

    /// An empty dictionary of `stripeCount` stripes (at least 1), a key's stripe picked by
    /// `stripeHash` (by default the key's `hashValue`, a second full hash per access).
    @inlinable
    public init(stripeCount: Int = 1, stripeHash: (@Sendable (Key) -> UInt)? = nil) {
        stripes = [[Key: Value]](repeating: [:], count: Swift.max(1, stripeCount))
        self.stripeHash = stripeHash
    }

    /// The stripe `key` lives in: a caller that keeps it (as `IndexedHeap` does with each
    /// entry) can skip the second hashing with `subscript(_:inStripe:)`.
    @inlinable
    public func stripe(of key: Key) -> Int {
        guard stripes.count > 1 else { return 0 }
        return Int((stripeHash?(key) ?? UInt(bitPattern: key.hashValue)) % UInt(stripes.count))
    }

    /// The value of `key`, which lives in `stripe` (`stripe(of: key)`); setting it (never to
    /// `nil`: use `removeValue`) replaces an existing value.
    /// - Precondition: `stripe == stripe(of: key)` and, when setting, `key` is present
    ///   (programmer errors; no outside bytes choose either).
    @inlinable
    public subscript(key: Key, inStripe stripe: Int) -> Value? {
        get { stripes[stripe][key] }
        set { stripes[stripe][key] = newValue }
    }

    /// The value of `key`; setting `nil` removes it.
    @inlinable
    public subscript(key: Key) -> Value? {
        get { stripes[stripe(of: key)][key] }
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
        let old = stripes[stripe(of: key)].updateValue(value, forKey: key)
        if old == nil { storedCount += 1 }
        return old
    }

    /// Removes `key`; returns its value, if it had one.
    @inlinable
    @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        let old = stripes[stripe(of: key)].removeValue(forKey: key)
        if old != nil { storedCount -= 1 }
        return old
    }

    /// Whether there are no keys.
    @inlinable public var isEmpty: Bool { storedCount == 0 }

    /// Every value, stripe by stripe.
    @inlinable
    public var values: LazyMapSequence<FlattenSequence<[[Key: Value]]>, Value> { stripes.joined().lazy.map(\.value) }

    /// Every key, stripe by stripe.
    @inlinable
    public var keys: LazyMapSequence<FlattenSequence<[[Key: Value]]>, Key> { stripes.joined().lazy.map(\.key) }

    /// Room for `capacity` keys in all, spread evenly over the stripes.
    @inlinable
    public mutating func reserveCapacity(_ capacity: Int) {
        let perStripe = capacity / stripes.count + 1
        for index in stripes.indices { stripes[index].reserveCapacity(perStripe) }
    }

    /// Every (key, value) pair, stripe by stripe.
    @inlinable
    public func makeIterator() -> FlattenSequence<[[Key: Value]]>.Iterator { stripes.joined().makeIterator() }
}

extension StripedDictionary: Sendable where Key: Sendable, Value: Sendable {}

extension StripedDictionary: Equatable where Value: Equatable {
    /// Equal when they hold the same keys with equal values (however striped).
    @inlinable
    public static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.allSatisfy { rhs[$0.key] == $0.value }
    }
}
