import ChimeCore
import ChimeStore
import ChimeWire
import Foundation

/// Nagging: a delivered firing of a reminder with a `nag` policy alerts again up to `count`
/// times, `interval` apart, unless it is handled first (any action or ack cancels the rest).
extension CoordinatorState {
    /// Arms the nags of a firing just acknowledged as delivered.
    mutating func armNags(after firing: Firing, deliveredAt: Date) {
        guard !firing.firingId.isNag, let entry = entries[firing.reminderId], entry.hasNag,
            let policy = entry.reminder.nag
        else { return }
        for nag in policy.nags(of: firing, deliveredAt: deliveredAt) {
            nagFirings[nag.firingId] = firing.makeNag(nag)
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

    /// Moves due nags to the waiting line.
    mutating func releaseDueNags(at now: Date) {
        for (id, _) in nags.popDue(at: now) {
            guard let firing = nagFirings.removeValue(forKey: id), inFlight[id] == nil else { continue }
            waiting.append(firing)
        }
    }
}
