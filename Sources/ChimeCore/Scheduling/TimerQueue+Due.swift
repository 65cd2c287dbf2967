import Foundation

extension TimerQueue {
    /// How many keys are due at `now` (deadline at or before it), counting at most `limit`:
    /// a walk of the heap that stops below every entry not yet due, so it visits about as many
    /// entries as are due, live or stale (see `compactDue(at:)`), times the heap's arity,
    /// whatever the queue's size.
    public func countDue(at now: Date, limit: Int = .max) -> Int {
        let cutoff = now.timeIntervalSinceReferenceDate
        var count = 0
        var pending = heap.isEmpty ? [] : [0]
        while let position = pending.popLast(), count < limit {
            let entry = heap[position]
            guard entry.stamp.deadline <= cutoff else { continue }
            if isLive(entry) { count += 1 }
            let firstChild = Self.arity * position + 1
            var child = firstChild
            while child < firstChild + Self.arity && child < heap.count {
                pending.append(child)
                child += 1
            }
        }
        return count
    }
}
