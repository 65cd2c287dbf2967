import ChimeCore
import Foundation

/// Arming reminders in the timer queue, through the per-recipient cap on pending firings
/// (`maxPending`, as iOS keeps only the soonest 64): only a recipient's soonest N reminders
/// are armed; the rest wait and are promoted as slots free.
extension CoordinatorState {
    /// The cap for `recipient`: its own `maxPending`, else the configured default; `nil`: none.
    func pendingLimit(for recipient: RecipientID) -> Int? {
        // Most clusters register no recipients; skip hashing the id then (loading a million).
        guard !recipients.isEmpty else { return configuration.maxPendingPerRecipient }
        return recipients[recipient]?.maxPending ?? configuration.maxPendingPerRecipient
    }

    /// Arms (or re-arms) a reminder to fire at `instant`, subject to its recipient's cap.
    mutating func arm(_ id: ReminderID, of recipient: RecipientID, at instant: Date) {
        guard let limit = pendingLimit(for: recipient) else {
            schedule.schedule(id, at: instant)
            return
        }
        var cap = caps[recipient] ?? PendingCap(limit: limit)
        let transitions = cap.schedule(id, nextFire: instant)
        caps[recipient] = cap
        apply(transitions, of: recipient)
    }

    /// Disarms a reminder (cancelled, switched off, finished), promoting a waiting one.
    mutating func disarm(_ id: ReminderID, of recipient: RecipientID) {
        schedule.remove(id)
        guard !caps.isEmpty, var cap = caps[recipient] else { return }
        let transitions = cap.remove(id)
        caps[recipient] = cap
        apply(transitions, of: recipient)
    }

    /// Re-applies a recipient's cap after its `maxPending` changed. A recipient left without
    /// a limit loses its cap (everything it held back is armed), so no cap keeps instants
    /// that arming without it no longer updates.
    mutating func updateCap(of recipient: RecipientID) {
        guard let limit = pendingLimit(for: recipient) else {
            guard var cap = caps[recipient] else { return }
            let transitions = cap.setLimit(nil)
            caps[recipient] = cap
            apply(transitions, of: recipient)
            caps[recipient] = nil
            return
        }
        guard var cap = caps[recipient] else {
            // First cap for this recipient: bring its pending reminders under it.
            let pending = entries.filter { $0.value.recipient == recipient && schedule.deadline(of: $0.key) != nil }.map(\.key)
            for id in pending.sorted() {
                // Armed without a cap until now: the cap decides again, and what it holds
                // back must leave the timer queue.
                if let instant = schedule.remove(id) { arm(id, of: recipient, at: instant) }
            }
            return
        }
        let transitions = cap.setLimit(limit)
        caps[recipient] = cap
        apply(transitions, of: recipient)
    }

    mutating func apply(_ transitions: [PendingCap<ReminderID>.Transition], of recipient: RecipientID) {
        for transition in transitions {
            switch transition {
            case .armed(let id):
                if let instant = caps[recipient]?.nextFire(of: id) { schedule.schedule(id, at: instant) }
            case .disarmed(let id):
                schedule.remove(id)
            }
        }
    }

    /// Whether a pending reminder is armed (always, without a cap).
    func isArmed(_ id: ReminderID, of recipient: RecipientID) -> Bool {
        caps[recipient]?.isArmed(id) ?? (schedule.deadline(of: id) != nil)
    }
}
