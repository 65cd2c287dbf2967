/// A first-in, first-out queue on a growable ring buffer: O(1) `append` and `popFirst`,
/// and no compaction pass (the coordinator's waiting line, leases, retained events and
/// remembered request ids each kept a start index into an array before).
///
/// Iteration runs oldest first. Capacity grows by doubling and never shrinks below what
/// was reached, so a queue that drains keeps its storage for the next burst.
public struct RingQueue<Element>: Sequence {
    @usableFromInline var storage: [Element?]
    /// The slot of the oldest element.
    @usableFromInline var head = 0
    @usableFromInline var storedCount = 0

    /// How many elements the queue holds.
    @inlinable public var count: Int { storedCount }

    /// An empty queue.
    @inlinable
    public init() { storage = [] }

    /// A queue holding `elements`, oldest first.
    @inlinable
    public init<S: Sequence>(_ elements: S) where S.Element == Element {
        storage = elements.map { Optional($0) }
        storedCount = storage.count
    }

    /// Whether the queue holds nothing.
    @inlinable
    public var isEmpty: Bool { count == 0 }

    /// The oldest element, if any.
    @inlinable
    public var first: Element? { count == 0 ? nil : storage[head] }

    /// The newest element, if any.
    @inlinable
    public var last: Element? { count == 0 ? nil : storage[slot(count - 1)] }

    /// The element `offset` places from the oldest (0 is the oldest).
    /// - Precondition: `0 <= offset < count` (a caller's bug otherwise).
    @inlinable
    public subscript(offset: Int) -> Element {
        precondition(offset >= 0 && offset < count, "RingQueue offset \(offset) out of 0..<\(count)")
        // The slot is occupied: every slot in the live window holds a value.
        return storage[slot(offset)].unsafelyUnwrapped
    }

    /// How many elements the queue holds before its storage grows.
    @inlinable public var capacity: Int { storage.count }

    /// Makes room for at least `minimumCapacity` elements in one allocation of exactly that
    /// many slots (when larger than now), so a queue with a known bound does not double past it.
    @inlinable
    public mutating func reserveCapacity(_ minimumCapacity: Int) {
        guard minimumCapacity > storage.count else { return }
        resize(to: minimumCapacity)
    }

    /// Adds `element` as the newest.
    @inlinable
    public mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[slot(count)] = element
        storedCount += 1
    }

    /// Adds `elements` as the newest, in order.
    @inlinable
    public mutating func append<S: Sequence>(contentsOf elements: S) where S.Element == Element {
        for element in elements { append(element) }
    }

    /// Puts `elements` before the oldest, keeping their order (they become the oldest).
    @inlinable
    public mutating func pushFront<C: BidirectionalCollection>(contentsOf elements: C) where C.Element == Element {
        for element in elements.reversed() {
            if count == storage.count { grow() }
            head = head == 0 ? storage.count - 1 : head - 1
            storage[head] = element
            storedCount += 1
        }
    }

    /// Removes and returns the oldest element, or `nil` when empty.
    @inlinable
    public mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = head + 1 == storage.count ? 0 : head + 1
        storedCount -= 1
        if count == 0 { head = 0 }
        return element
    }

    /// Removes the oldest `k` elements (all of them when `k >= count`).
    @inlinable
    public mutating func removeFirst(_ k: Int) {
        for _ in 0..<Swift.min(Swift.max(k, 0), count) { _ = popFirst() }
    }

    /// Removes every element, keeping the storage.
    @inlinable
    public mutating func removeAll() {
        while popFirst() != nil {}
    }

    /// Iterates oldest first.
    @inlinable
    public func makeIterator() -> Iterator { Iterator(queue: self) }

    /// Iterates a queue's elements oldest first.
    public struct Iterator: IteratorProtocol {
        @usableFromInline let queue: RingQueue
        @usableFromInline var offset = 0

        @inlinable init(queue: RingQueue) { self.queue = queue }

        /// The next element, oldest first.
        @inlinable
        public mutating func next() -> Element? {
            guard offset < queue.count else { return nil }
            defer { offset += 1 }
            return queue[offset]
        }
    }

    @inlinable
    func slot(_ offset: Int) -> Int {
        let raw = head + offset
        return raw >= storage.count ? raw - storage.count : raw
    }

    @inlinable
    mutating func grow() { resize(to: Swift.max(16, storage.count * 2)) }

    @inlinable
    mutating func resize(to slots: Int) {
        var grown = [Element?](repeating: nil, count: slots)
        for offset in 0..<count { grown[offset] = storage[slot(offset)] }
        storage = grown
        head = 0
    }
}

extension RingQueue: Sendable where Element: Sendable {}

extension RingQueue: Equatable where Element: Equatable {
    /// Equal when they hold equal elements in the same order (storage layout aside).
    @inlinable
    public static func == (lhs: RingQueue, rhs: RingQueue) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }
}
