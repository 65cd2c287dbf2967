import ChimeCore
import ChimeJournal
import ChimeSecurity
import ChimeWire
import Foundation

/// A change in the cluster an operator acts on, which the state notes for its service to log
/// (`CoordinatorState.takeNotices()`). Not journaled and not part of the fold: a recovery
/// notes nothing, and the next worker message or tick notes what it changes.
public enum CoordinatorNotice: Sendable, Hashable {
    /// A worker announced itself for the first time, after it was lost, or with another
    /// process id (restarted). `capacity`: the firings it accepts at once.
    case workerJoined(WorkerID, host: String, pid: Int32, capacity: Int, isReturning: Bool)
    /// A worker missed `liveness` heartbeats: its leases ended and the firings it held wait
    /// for another worker. `leases`: how many it held; `firings`: the first few of them, in
    /// due order (at most `CoordinatorNotice.maximumListedFirings`); `silentSeconds`: since
    /// its last message, on the monotonic clock.
    case workerLost(WorkerID, host: String, pid: Int32, silentSeconds: Double, leases: Int, firings: [FiringID])
    /// A worker let `LeaseFailureBook.quarantineAfter` leases in a row run out: it gets no
    /// firings for `seconds` (doubling while it keeps failing).
    case workerQuarantined(WorkerID, seconds: Double)
    /// A stopping worker said it was leaving (`WorkerMessage.leaving`): the firings it still
    /// held (`handedBack`, the first few listed) wait for another worker at once.
    case workerLeft(WorkerID, host: String, pid: Int32, handedBack: Int, firings: [FiringID])
    /// An admission stage refused a control request (`error`, its reply); `role`: the peer's,
    /// for an authorization refusal. The service logs it for the peer that sent it, a few a
    /// second at most.
    case requestRefused(ControlOperation, stage: AdmissionStage, role: Role?, error: WireError)
    /// This shard holds `reminders` reminders (and `firings` unsettled firings) of `slots`
    /// slots that its read of the map gives to other shards, outside any move: a journal
    /// restored from before a move, or a hand-edited map. They are neither fired, listed nor
    /// served here (``SlotMoveLedger/serves(slot:shard:map:)``).
    case unservedData(reminders: Int, firings: Int, slots: Int)
    /// The register committed a move to this shard that this shard never adopted (its
    /// adopted slice is gone: a journal cut short): the move's reminders are lost here.
    case moveLostAtTarget(SlotMoveID, slots: Int)

    /// Firing ids a `workerLost` notice lists at most.
    public static let maximumListedFirings = 5
    /// Notices kept between two `takeNotices()` calls at most (later ones are dropped: a
    /// service drains them every loop turn, so only a state without a service gets there).
    static let capacity = 256
}

extension CoordinatorState {
    /// The notices since the last call, oldest first; the list is emptied.
    public mutating func takeNotices() -> [CoordinatorNotice] {
        defer { notices.removeAll(keepingCapacity: true) }
        return notices
    }

    mutating func note(_ notice: CoordinatorNotice) {
        if notices.count < CoordinatorNotice.capacity { notices.append(notice) }
    }
}
