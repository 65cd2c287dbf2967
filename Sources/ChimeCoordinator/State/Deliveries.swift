import ChimeCore
import ChimeWire
import Foundation

/// Firings made and not yet settled, those that exhausted their attempts, the nag re-alerts
/// armed after deliveries, the acknowledged events kept for catch-up and the reserved event
/// seqs. A part of `DurableState`, changed only by its fold.
///
/// Which worker holds an unsettled firing, its lease and its dispatch `seq` are volatile (the
/// coordinator's in-flight map): a recovery sends every unsettled firing again with its firing
/// id and attempt number.
struct Deliveries: Sendable, Equatable {
    /// Firings made (`.fired`, `.nagFired`, `.retried`) and not yet acknowledged or
    /// dead-lettered, with their attempt numbers.
    var unsettled: [FiringID: SharedFiring] = [:]
    /// Firings that exhausted their attempts.
    var deadLetters: [FiringID: Firing] = [:]
    /// The keys of `deadLetters` in listing order.
    var deadLetterIndex = SortedKeySet<DeadLetterKey>()
    /// Nag re-alerts armed after a delivery, by nag firing id.
    var nagFirings: [FiringID: Firing] = [:]
    /// When each of `nagFirings` comes due (UTC).
    var nags = TimerQueue<FiringID>()
    /// Acknowledged fire events kept for catch-up.
    var eventLog: EventLog
    /// The highest event `seq` reserved in the journal (`.seqReserved`): a recovery's first
    /// dispatch gets the next one.
    var eventSeqReserved: UInt64 = 0

    init(eventRetention: Int) { eventLog = EventLog(capacity: eventRetention) }

    /// Arms the nags of a firing just acknowledged as delivered under `policy`.
    mutating func armNags(after firing: Firing, deliveredAt: Date, policy: NagPolicy) {
        for nag in policy.nags(of: firing, deliveredAt: deliveredAt) {
            var nagFiring = firing.makeNag(nag)
            // A nag gets its own seq when it is dispatched.
            nagFiring.seq = nil
            nagFirings[nag.firingId] = nagFiring
            nags.schedule(nag.firingId, at: nag.at)
        }
    }

    /// Cancels the nags still pending for a handled firing.
    mutating func cancelNags(of firingId: FiringID) {
        let base = firingId.nagBase
        for id in nagFirings.keys where id.nagBase == base {
            nagFirings[id] = nil
            nags.remove(id)
        }
    }
}

/// The order of dead letters: by due millisecond, then firing id (`deadLetterIndex`).
struct DeadLetterKey: Comparable, Hashable, Sendable {
    let firingId: FiringID
    init(_ firingId: FiringID) { self.firingId = firingId }

    static func < (lhs: DeadLetterKey, rhs: DeadLetterKey) -> Bool {
        (lhs.firingId.dueAtMilliseconds, lhs.firingId) < (rhs.firingId.dueAtMilliseconds, rhs.firingId)
    }
}
