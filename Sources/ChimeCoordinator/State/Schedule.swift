import ChimeCore
import Foundation

/// The reminders and where each stands: the entries, their id order for paging, the timer
/// queue of armed fire instants, the per-recipient caps on armed reminders and the late
/// firings counted for `fireAllCap`. A part of `DurableState`, changed only by its fold.
///
/// Invariants: every pending entry with a next occurrence is in exactly one of the timer
/// (armed) or its recipient's cap's waiting list (held back by `maxPending`), at the instant it
/// fires; `index` holds exactly the ids of `entries`; `recurrences` holds the occurrence
/// sequence of every repeating entry (a cache: derived from the reminder and its recipient's
/// zone, so `@Derived`); no cap is empty.
struct Schedule: Sendable, Equatable {
    var entries = EntryTable()
    /// The ids of `entries` in order, for `list` pages.
    var index = SortedKeySet<ReminderKey>()
    /// The occurrence sequence of every repeating reminder (one-shots rebuild theirs on
    /// demand), with recipient zones resolved.
    @Derived var recurrences: [ReminderKey: Recurrence] = [:]
    /// Armed reminders by the instant their next occurrence fires (UTC).
    var timer = TimerQueue<ReminderKey>(stripeCount: EntryTable.stripeCount, stripeHash: { $0.stripeHash })
    /// Per-recipient caps on armed reminders, for recipients that have a limit.
    var caps: [RecipientID: PendingCap<ReminderKey>] = [:]
    /// Late firings made per reminder since it last fired on time, for `fireAllCap`.
    var lateFirings: [ReminderKey: Int] = [:]

    /// Whether a pending reminder is armed (always, without a cap).
    func isArmed(_ id: ReminderKey, of recipient: RecipientID) -> Bool {
        caps[recipient]?.isArmed(id) ?? (timer.deadline(of: id) != nil)
    }

    /// Arms (or re-arms) a reminder to fire at `instant`, subject to its recipient's cap of
    /// `limit` armed reminders (`nil`: none).
    mutating func arm(_ id: ReminderKey, of recipient: RecipientID, at instant: Date, limit: Int?) {
        guard let limit else {
            timer.schedule(id, at: instant)
            return
        }
        var cap = caps[recipient] ?? PendingCap(limit: limit)
        let transitions = cap.schedule(id, nextFire: instant)
        caps[recipient] = cap
        carry(transitions, of: recipient)
    }

    /// Disarms a reminder (cancelled, switched off, finished), promoting a held-back one.
    mutating func disarm(_ id: ReminderKey, of recipient: RecipientID) {
        timer.remove(id)
        guard !caps.isEmpty, var cap = caps[recipient] else { return }
        let transitions = cap.remove(id)
        // An empty cap holds nothing a new one would not: none is kept.
        caps[recipient] = cap.count == 0 ? nil : cap
        carry(transitions, of: recipient)
    }

    /// Re-applies a recipient's cap after its limit changed to `limit` (`nil`: none). A
    /// recipient left without a limit loses its cap (everything it held back is armed), so no
    /// cap keeps instants that arming without it no longer updates.
    mutating func updateCap(of recipient: RecipientID, limit: Int?) {
        guard let limit else {
            guard var cap = caps[recipient] else { return }
            let transitions = cap.setLimit(nil)
            caps[recipient] = cap
            carry(transitions, of: recipient)
            caps[recipient] = nil
            return
        }
        guard var cap = caps[recipient] else {
            // First cap for this recipient: bring its armed reminders under it, in id order.
            let armed = entries.filter { $0.value.recipient == recipient && timer.deadline(of: $0.key) != nil }.map(\.key)
            for id in armed.sorted() {
                // Armed without a cap until now: the cap decides again, and what it holds back
                // must leave the timer queue.
                if let instant = timer.remove(id) { arm(id, of: recipient, at: instant, limit: limit) }
            }
            return
        }
        let transitions = cap.setLimit(limit)
        caps[recipient] = cap
        carry(transitions, of: recipient)
    }

    /// Carries a cap's decisions into the timer queue.
    private mutating func carry(_ transitions: [PendingCap<ReminderKey>.Transition], of recipient: RecipientID) {
        for transition in transitions {
            switch transition {
            case .armed(let id):
                if let instant = caps[recipient]?.nextFire(of: id) { timer.schedule(id, at: instant) }
            case .disarmed(let id):
                timer.remove(id)
            }
        }
    }

    /// Removes a reminder (and its place in the timer and its recipient's cap) and returns its
    /// entry.
    @discardableResult
    mutating func remove(_ id: ReminderKey) -> ReminderEntry? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        index.remove(id)
        recurrences[id] = nil
        if !lateFirings.isEmpty { lateFirings[id] = nil }
        disarm(id, of: entry.recipient)
        return entry
    }
}
