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
    /// Why each dead letter whose destinations failed was dead-lettered (absent for those that
    /// exhausted their dispatch attempts).
    var deadLetterFailures: [FiringID: DeliveryFailure] = [:]
    /// The destinations (``Destination/redactedKey``, sorted) that already have a firing
    /// whose other destinations failed: its dead letter's delivered and removed ones, kept from
    /// `.deliveryFailed` on while the firing is a dead letter or retried and unsettled, so a
    /// retry goes only to the destinations that do not have it yet (those that failed, and any
    /// added since). Dropped when the firing is acknowledged or its dead letter deleted.
    var retrySkips: [FiringID: [String]] = [:]
    /// The keys of `deadLetters` in listing order.
    var deadLetterIndex = SortedKeySet<DeadLetterKey>()
    /// Nag re-alerts armed after a delivery, by nag firing id.
    var nagFirings: [FiringID: Firing] = [:]
    /// When each of `nagFirings` comes due (UTC).
    var nags = TimerQueue<FiringID>()
    /// Firings held in their recipient's quiet hours (`.attention(.held)`), by firing id: not
    /// yet unsettled, so neither dispatched nor redelivered by a recovery until released.
    var heldFirings: [FiringID: Firing] = [:]
    /// When each of `heldFirings` is released (UTC: the end of its quiet window, its summary
    /// or its throttle slot).
    var holds = TimerQueue<FiringID>()
    /// Why each of `heldFirings` is held, as journaled with its hold (absent for holds
    /// journaled before reasons were recorded).
    var holdReasons: [FiringID: HoldReason] = [:]
    /// Acknowledged fire events kept for catch-up.
    var eventLog: EventLog
    /// The highest event `seq` reserved in the journal (`.seqReserved`): a recovery's first
    /// dispatch gets the next one.
    var eventSeqReserved: UInt64 = 0
    /// Unsettled firings that may have been made ahead of their due instant (a `.fired` whose
    /// `at` is before its `dueAt`, `coordinator.dispatchLeadMilliseconds`), by reminder: the
    /// ones a cancel, switch-off or replace before their due instant takes back
    /// (``takeBackAhead(of:before:)``). Derived and volatile (not in the snapshot): a
    /// snapshot load lists every unsettled firing here, a superset the look-up filters.
    @Derived var ahead: [ReminderKey: [FiringID]] = [:]
    /// The held firings whose reason is the throttle, by reminder: what a `throttled: coalesce`
    /// occurrence is coalesced into, found without a pass over every held firing. Derived:
    /// kept by ``noteHoldReason(_:_:)``, rebuilt by a snapshot load and a slice.
    @Derived var throttleHeld: [ReminderKey: Set<FiringID>] = [:]

    init(eventRetention: Int) { eventLog = EventLog(capacity: eventRetention) }

    /// Removes and returns the unsettled firings of `key` made ahead of time and due after
    /// `instant` (UTC): their reminder was cancelled, switched off or replaced before they
    /// were due, so they must not be delivered.
    mutating func takeBackAhead(of key: ReminderKey, before instant: Date) -> [FiringID] {
        guard !ahead.isEmpty, let ids = ahead.removeValue(forKey: key) else { return [] }
        var taken: [FiringID] = []
        var kept: [FiringID] = []
        for id in ids {
            guard let shared = unsettled[id] else { continue }
            if shared.firing.dueAt > instant {
                unsettled[id] = nil
                taken.append(id)
            } else {
                kept.append(id)
            }
        }
        if !kept.isEmpty { ahead[key] = kept }
        return taken
    }

    /// The earliest due instant (UTC) after `instant` of `key`'s unsettled firings made ahead
    /// of time, or `nil` when none is held ahead: such a firing was handed over but has not
    /// fired yet, so its reminder still reads as pending. O(firings of `key` in `ahead`);
    /// filtering on the due instant keeps a snapshot load's superset exact.
    func earliestAhead(of key: ReminderKey, after instant: Date) -> Date? {
        guard !ahead.isEmpty, let ids = ahead[key] else { return nil }
        var earliest: Date?
        for id in ids {
            guard let dueAt = unsettled[id]?.firing.dueAt, dueAt > instant else { continue }
            if earliest.map({ dueAt < $0 }) ?? true { earliest = dueAt }
        }
        return earliest
    }

    /// Every reminder with an unsettled firing made ahead of time and due after `instant`,
    /// with the earliest such due instant (UTC). O(`ahead`): in steady state the firings handed
    /// over within one lead; after a snapshot load, every unsettled firing until it settles.
    func heldAhead(after instant: Date) -> [ReminderKey: Date] {
        var held: [ReminderKey: Date] = [:]
        for key in ahead.keys {
            if let dueAt = earliestAhead(of: key, after: instant) { held[key] = dueAt }
        }
        return held
    }

    /// Forgets `id` in `ahead` once it is settled (acknowledged or dead-lettered).
    mutating func forgetAhead(_ id: FiringID) {
        guard !ahead.isEmpty, var ids = ahead[id.key] else { return }
        ids.removeAll { $0 == id }
        ahead[id.key] = ids.isEmpty ? nil : ids
    }

    /// Lists every unsettled firing in `ahead` (after a snapshot load, which does not keep it).
    mutating func rebuildAhead() {
        ahead = [:]
        for id in unsettled.keys where !id.isNag { ahead[id.key, default: []].append(id) }
    }

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

    /// Holds `firing` until `until` (UTC) for `reason`, unless a firing of its id is
    /// unsettled or held already (a repeat of the same occurrence).
    mutating func hold(_ firing: Firing, until: Date, reason: HoldReason?) {
        let id = firing.firingId
        guard unsettled[id] == nil, heldFirings[id] == nil else { return }
        heldFirings[id] = firing
        holds.schedule(id, at: until)
        noteHoldReason(id, reason)
    }

    /// Sets (or, with `nil`, clears) the reason of held firing `id`, keeping ``throttleHeld``.
    mutating func noteHoldReason(_ id: FiringID, _ reason: HoldReason?) {
        let old = holdReasons[id]
        holdReasons[id] = reason
        guard old != reason, old == .throttle || reason == .throttle else { return }
        if reason == .throttle {
            throttleHeld[id.key, default: []].insert(id)
        } else if var ids = throttleHeld[id.key] {
            ids.remove(id)
            throttleHeld[id.key] = ids.isEmpty ? nil : ids
        }
    }

    /// Lists every held firing of reason `.throttle` in ``throttleHeld`` (after a snapshot
    /// load or a slice, which set the reasons wholesale).
    mutating func rebuildThrottleHeld() {
        throttleHeld = [:]
        for (id, reason) in holdReasons where reason == .throttle { throttleHeld[id.key, default: []].insert(id) }
    }

    /// Takes a held firing out of the holds, making it unsettled (waiting for a worker) unless
    /// a firing of its id is unsettled already; returns the firing made.
    mutating func release(_ id: FiringID) -> SharedFiring? {
        holds.remove(id)
        noteHoldReason(id, nil)
        guard let firing = heldFirings.removeValue(forKey: id), unsettled[id] == nil else { return nil }
        let shared = SharedFiring(firing)
        unsettled[id] = shared
        return shared
    }

    /// Drops the held firings of `key` (its reminder was cancelled: a held firing is still
    /// pending, and goes with it).
    mutating func dropHeld(of key: ReminderKey) {
        guard !heldFirings.isEmpty else { return }
        for id in heldFirings.keys where id.key == key {
            heldFirings[id] = nil
            holds.remove(id)
            noteHoldReason(id, nil)
        }
    }

    /// Moves the hold of each of `recipient`'s held firings to the instant `release` gives it
    /// from the firing, its reason and its current release (UTC; `nil` leaves the hold as it
    /// is): the recipient's attention settings changed.
    mutating func retime(
        heldFor recipient: RecipientID, _ release: (Firing, HoldReason?, Date) -> (until: Date, reason: HoldReason?)?
    ) {
        guard !heldFirings.isEmpty else { return }
        for (id, firing) in heldFirings where firing.recipient == recipient {
            guard let current = holds.deadline(of: id), let (until, reason) = release(firing, holdReasons[id], current) else { continue }
            holds.schedule(id, at: until)
            noteHoldReason(id, reason)
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
