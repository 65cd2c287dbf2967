import ChimeCore
import ChimeWire
import Foundation

extension CoordinatorState {
    /// Takes back firings handed over ahead of their due instant whose reminder was cancelled,
    /// switched off or replaced before they were due (the entry's fold already removed them
    /// from the unsettled firings): one still waiting leaves the line; one a worker holds is
    /// revoked with a batch that names it (`DispatchBatch.revoked`), so the worker drops it
    /// unless it already delivered it (then its acknowledgement changes nothing, as for a
    /// firing delivered just before its reminder was cancelled).
    mutating func revoke(_ firingIds: [FiringID], directives: inout [CoordinatorDirective]) {
        var byWorker: [WorkerID: [FiringID]] = [:]
        var leftWaiting = false
        for id in firingIds {
            if let flight = dispatch.inFlight.removeValue(forKey: id) {
                dispatch.workers[flight.worker]?.outstanding -= 1
                byWorker[flight.worker, default: []].append(id)
            } else {
                leftWaiting = true
            }
            dispatch.leaseFailures.forget(id)
        }
        counters.revoked += firingIds.count
        if leftWaiting {
            var kept = RingQueue<SharedFiring>()
            kept.reserveCapacity(dispatch.waiting.count)
            for shared in dispatch.waiting where unsettled[shared.firing.firingId] === shared { kept.append(shared) }
            dispatch.waiting = kept
        }
        for (worker, ids) in byWorker.sorted(by: { $0.key < $1.key }) {
            directives.append(.dispatch(
                DispatchBatch(
                    epoch: identity.epoch, leaseMilliseconds: Int(configuration.leaseDuration * 1000), firings: [],
                    revoked: ids),
                to: worker))
        }
    }
}
