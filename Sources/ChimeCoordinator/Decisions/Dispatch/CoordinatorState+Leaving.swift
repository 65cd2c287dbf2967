import ChimeCore
import ChimeStore
import Foundation

extension CoordinatorState {
    /// A worker that stops (SIGTERM) says so in its last message, after the acknowledgements
    /// of everything it delivered: it gets nothing more, and the firings it still holds (in
    /// its socket, or on their way to it) go back in line at once, for another worker, rather
    /// than after their lease. Its record stays, not alive, like a lost worker's.
    mutating func onWorkerLeaving(_ worker: WorkerID, at now: Date, directives: inout [CoordinatorDirective]) {
        guard let record = dispatch.workers[worker] else { return }
        // A worker says it leaves on results and on dispatch; the second changes nothing.
        let hadLeft = record.hasLeft && !record.isAlive
        let held = takeBackFirings(heldBy: worker, at: now, directives: &directives)
        dispatch.workers[worker]?.hasLeft = true
        guard !hadLeft || !held.isEmpty else { return }
        note(.workerLeft(
            worker, host: record.host, pid: record.pid, handedBack: held.count,
            firings: Array(held.prefix(CoordinatorNotice.maximumListedFirings))))
    }

    /// Marks `worker` gone (not alive, not reachable: it must announce itself over the
    /// dispatch connection again before it gets firings) and puts every firing it holds back
    /// in line, in due order (`requeue`: a `leaseExpired` entry each).
    /// - Returns: the firings taken back, in due order.
    mutating func takeBackFirings(heldBy worker: WorkerID, at now: Date, directives: inout [CoordinatorDirective]) -> [FiringID] {
        dispatch.workers[worker]?.isAlive = false
        dispatch.workers[worker]?.isReachable = false
        dispatch.workers[worker]?.outstanding = 0
        let held = dispatch.inFlight.filter { $0.value.worker == worker }.sorted {
            ($0.value.firing.dueAt, $0.key) < ($1.value.firing.dueAt, $1.key)
        }
        for (firingId, _) in held {
            dispatch.inFlight[firingId] = nil
            requeue(firingId, at: now, directives: &directives)
        }
        return held.map(\.key)
    }
}
