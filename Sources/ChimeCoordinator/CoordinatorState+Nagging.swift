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

    /// Moves due nags to the unsettled firings and the waiting line.
    mutating func releaseDueNags(at now: Date, directives: inout [CoordinatorDirective]) {
        for (id, _) in nags.popDue(at: now) {
            guard nagFirings[id] != nil, unsettled[id] == nil else { continue }
            if let made = record(.nagFired(id, at: now), into: &directives).made { waiting.append(made) }
        }
    }
}
