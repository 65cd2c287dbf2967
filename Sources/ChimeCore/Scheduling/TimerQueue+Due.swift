import Foundation

extension TimerQueue {
    /// How many keys are due at `now` (deadline at or before it), counting at most `limit`:
    /// a walk of the heap that stops below every key not yet due, so it visits about as many
    /// entries as it counts (times the heap's arity), whatever the queue's size.
    public func countDue(at now: Date, limit: Int = .max) -> Int {
        let cutoff = now.timeIntervalSinceReferenceDate
        let entries = heap.unorderedEntries
        let arity = IndexedHeap<Key, Stamp>.arity
        var count = 0
        var pending = entries.isEmpty ? [] : [0]
        while let position = pending.popLast(), count < limit {
            guard entries[position].priority.deadline <= cutoff else { continue }
            count += 1
            let firstChild = arity * position + 1
            var child = firstChild
            while child < firstChild + arity && child < entries.count {
                pending.append(child)
                child += 1
            }
        }
        return count
    }
}
