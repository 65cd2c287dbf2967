import ChimeCore
import ChimeWire

/// The last firings a worker delivered to every one of their destinations, with the report it
/// acknowledged them with: a coordinator that takes over (a newer epoch) hands out again every
/// firing whose acknowledgement it has not journaled, and the worker answers those it already
/// delivered from here instead of sending them to the same destinations twice.
///
/// Bounded: at most ``capacity`` firings, the oldest forgotten first; each report keeps only
/// the last attempt of each outcome (the coordinator reads outcomes, not history, from the
/// report of a firing that did not fail). Forgetting only costs the duplicate this avoids.
struct DeliveredFirings: Sendable {
    /// What is remembered of one firing.
    struct Entry: Sendable, Hashable {
        /// The epoch of the batch whose firing was delivered.
        var epoch: UInt64
        /// The keys (``Destination/key``) of the destinations it was delivered to.
        var destinationKeys: Set<String>
        /// The report it was acknowledged with, attempts cut to the last one per outcome.
        var report: DeliveryReport
    }

    /// The most firings remembered.
    static let capacity = 4096

    private var entries: [FiringID: Entry] = [:]
    /// Firing ids in the order they were first remembered; `order[head...]` are live.
    private var order: [FiringID] = []
    private var head = 0

    /// How many firings are remembered.
    var count: Int { entries.count }

    /// The entry of `id`, if it is still remembered.
    subscript(id: FiringID) -> Entry? { entries[id] }

    /// Remembers that `report`'s firing, handed over in `epoch`, reached the destinations of
    /// `destinationKeys`; forgets the oldest firing past ``capacity``.
    mutating func remember(_ report: DeliveryReport, epoch: UInt64, destinationKeys: Set<String>) {
        var trimmed = report
        for index in trimmed.outcomes.indices {
            trimmed.outcomes[index].attempts = Array(trimmed.outcomes[index].attempts.suffix(1))
        }
        let entry = Entry(epoch: epoch, destinationKeys: destinationKeys, report: trimmed)
        if entries.updateValue(entry, forKey: report.firingId) == nil { order.append(report.firingId) }
        while entries.count > Self.capacity, head < order.count {
            entries[order[head]] = nil
            head += 1
        }
        if head >= Self.capacity {
            order.removeFirst(head)
            head = 0
        }
    }
}
