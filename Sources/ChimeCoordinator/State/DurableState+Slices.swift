import ChimeCore
import ChimeStore
import Foundation

/// Slices: everything about a set of recipients, cut out of a durable state as a state of its
/// own, and taken into another. Every per-recipient rule (caps, badges, delivered lists, nags,
/// zones) reads only that recipient's data, so a slice is complete: it is what a shard hands
/// to another when recipients move between shards. `merge(split(s, p).rest, split(s, p).slice)
/// == s` for every state and predicate (`DurableStateSliceTests`).
extension DurableState {
    /// Splits the state by recipient.
    /// - Parameter isSliced: whether a recipient's data goes into the slice.
    /// - Returns: `slice`, everything about the recipients `isSliced` accepts (reminders, caps,
    ///   late counts, unsettled firings, dead letters, nags, registrations, badge ledgers,
    ///   action jobs, remembered replies about one of them), and `rest`, everything else
    ///   (replies about no one recipient included). Both keep the settings, the epoch and the
    ///   reserved and badge event seqs, which a merge takes the highest of; the rest keeps the
    ///   move ledger and every retained event: those are this shard's event stream, numbered
    ///   by its `seq`, which a slice moving to another shard would break (that shard's
    ///   subscribers hold a watermark of its own count).
    public func split(where isSliced: (RecipientID) -> Bool) -> (slice: DurableState, rest: DurableState) {
        var slice = DurableState(settings: settings)
        var rest = DurableState(settings: settings)
        slice.highestRecordedEpoch = highestRecordedEpoch
        rest.highestRecordedEpoch = highestRecordedEpoch
        (slice.schedule, rest.schedule) = schedule.split(isSliced)
        (slice.deliveries, rest.deliveries) = deliveries.split(isSliced)
        (slice.recipients, rest.recipients) = recipients.split(isSliced)
        (slice.actionJobs, rest.actionJobs) = actionJobs.split(isSliced)
        (slice.requestLog, rest.requestLog) = requestLog.split(isSliced)
        (slice.triggers, rest.triggers) = triggers.split(isSliced)
        if !triggers.tracksNothing {
            slice.rebuildTriggerIndexes()
            rest.rebuildTriggerIndexes()
        }
        // The move ledger is about the shard, not about recipients: it stays with the rest.
        rest.moves = moves
        return (slice, rest)
    }

    /// The `slice` of `split(where:)` alone: what a source ships, built without rebuilding
    /// the rest (the reminder ids are scanned once; only the slice's k reminders are copied
    /// and armed). `split` rebuilt both halves, about 2–3 s for a 500,000-reminder shard on
    /// the loop, twice per move.
    public func slice(where isSliced: (RecipientID) -> Bool) -> DurableState {
        var slice = DurableState(settings: settings)
        slice.highestRecordedEpoch = highestRecordedEpoch
        slice.schedule = schedule.slice(isSliced)
        slice.deliveries = deliveries.split(isSliced).slice
        slice.recipients = recipients.split(isSliced).slice
        slice.actionJobs = actionJobs.split(isSliced).slice
        slice.requestLog = requestLog.split(isSliced).slice
        slice.triggers = triggers.split(isSliced).slice
        if !triggers.tracksNothing { slice.rebuildTriggerIndexes() }
        return slice
    }

    /// Makes this state the `rest` of `split(where:)` in place: the schedule loses the
    /// slice's reminders one at a time (O(k log n) for k of n) instead of being rebuilt; the
    /// smaller parts (deliveries, recipients, jobs, replies) are split as before.
    public mutating func removeSlice(where isSliced: (RecipientID) -> Bool) {
        schedule.removeSlice(isSliced)
        deliveries = deliveries.split(isSliced).rest
        recipients = recipients.split(isSliced).rest
        actionJobs = actionJobs.split(isSliced).rest
        requestLog = requestLog.split(isSliced).rest
        let hadTracked = !triggers.tracksNothing
        triggers = triggers.split(isSliced).rest
        if hadTracked { rebuildTriggerIndexes() }
    }

    /// Takes in a slice of another state (its recipients' data, which this state must not
    /// hold): their reminders armed under this state's settings, their firings, events, jobs
    /// and replies interleaved with these in their order; the epoch and the reserved and
    /// badge event seqs become the higher of the two. Folds nothing and journals nothing: a
    /// shard adopting a slice journals that fact, and its fold calls this.
    public mutating func merge(_ slice: DurableState) {
        highestRecordedEpoch = max(highestRecordedEpoch, slice.highestRecordedEpoch)
        recipients.merge(slice.recipients)
        // The receiver's caps: its settings and registrations (the slice's were merged above).
        let registered = recipients.registered
        let defaultLimit = settings.maxPendingPerRecipient
        schedule.merge(slice.schedule) { registered[$0]?.maxPending ?? defaultLimit }
        deliveries.merge(slice.deliveries)
        actionJobs.merge(slice.actionJobs, retention: settings.finishedJobRetention)
        requestLog.merge(slice.requestLog)
        triggers.merge(slice.triggers)
        for key in slice.schedule.index {
            guard let entry = slice.schedule.entries[key], entry.usesTriggerState else { continue }
            triggers.track(key, entry.reminder.trigger)
        }
    }
}

extension Schedule {
    func split(_ isSliced: (RecipientID) -> Bool) -> (slice: Schedule, rest: Schedule) {
        var slice = Schedule()
        var rest = Schedule()
        var sliceIDs: [ReminderKey] = []
        var restIDs: [ReminderKey] = []
        // In index order, so each side's index is built from sorted keys.
        for key in index {
            guard let entry = entries[key] else { continue }
            func put(_ part: inout Schedule, _ ids: inout [ReminderKey]) {
                part.entries[key] = entry
                if let recurrence = recurrences[key] { part.recurrences[key] = recurrence }
                if let late = lateFirings[key] { part.lateFirings[key] = late }
                if let deadline = timer.deadline(of: key) { part.timer.schedule(key, at: deadline) }
                ids.append(key)
            }
            if isSliced(entry.recipient) { put(&slice, &sliceIDs) } else { put(&rest, &restIDs) }
        }
        slice.index = SortedKeySet(sliceIDs)
        rest.index = SortedKeySet(restIDs)
        for (recipient, cap) in caps {
            if isSliced(recipient) { slice.caps[recipient] = cap } else { rest.caps[recipient] = cap }
        }
        return (slice, rest)
    }

    /// The `slice` of `split`, built from the sliced reminders alone.
    func slice(_ isSliced: (RecipientID) -> Bool) -> Schedule {
        var slice = Schedule()
        var sliceIDs: [ReminderKey] = []
        for key in index {
            guard let entry = entries[key], isSliced(entry.recipient) else { continue }
            slice.entries[key] = entry
            if let recurrence = recurrences[key] { slice.recurrences[key] = recurrence }
            if let late = lateFirings[key] { slice.lateFirings[key] = late }
            if let deadline = timer.deadline(of: key) { slice.timer.schedule(key, at: deadline) }
            sliceIDs.append(key)
        }
        slice.index = SortedKeySet(sliceIDs)
        for (recipient, cap) in caps where isSliced(recipient) { slice.caps[recipient] = cap }
        return slice
    }

    /// Becomes the `rest` of `split` in place: every sliced reminder leaves the entries, the
    /// order, the timer, the caches and the late counts, and the sliced recipients' caps go.
    mutating func removeSlice(_ isSliced: (RecipientID) -> Bool) {
        var sliced: [ReminderKey] = []
        for key in index {
            if let entry = entries[key], isSliced(entry.recipient) { sliced.append(key) }
        }
        for key in sliced {
            entries.removeValue(forKey: key)
            index.remove(key)
            recurrences[key] = nil
            if !lateFirings.isEmpty { lateFirings[key] = nil }
            timer.remove(key)
        }
        caps = caps.filter { !isSliced($0.key) }
    }

    /// Takes in another schedule's reminders (of recipients this one holds none of), arming
    /// their pending ones under `limit` (the receiver's caps).
    mutating func merge(_ other: Schedule, limit: (RecipientID) -> Int?) {
        for key in other.index {
            guard let entry = other.entries[key] else { continue }
            entries[key] = entry
            index.insert(key)
            if let recurrence = other.recurrences[key] { recurrences[key] = recurrence }
            if let late = other.lateFirings[key] { lateFirings[key] = late }
            let armedAt = other.timer.deadline(of: key) ?? other.caps[entry.recipient]?.nextFire(of: key)
            if entry.state == .pending, let armedAt { arm(key, of: entry.recipient, at: armedAt, limit: limit(entry.recipient)) }
        }
    }
}

extension Deliveries {
    func split(_ isSliced: (RecipientID) -> Bool) -> (slice: Deliveries, rest: Deliveries) {
        var slice = Deliveries(eventRetention: eventLog.capacity)
        var rest = Deliveries(eventRetention: eventLog.capacity)
        for (id, shared) in unsettled {
            if isSliced(shared.firing.recipient) { slice.unsettled[id] = shared } else { rest.unsettled[id] = shared }
        }
        for (id, skips) in retrySkips {
            guard let recipient = unsettled[id]?.firing.recipient ?? deadLetters[id]?.recipient else { continue }
            if isSliced(recipient) { slice.retrySkips[id] = skips } else { rest.retrySkips[id] = skips }
        }
        for key in deadLetterIndex {
            guard let firing = deadLetters[key.firingId] else { continue }
            func put(_ part: inout Deliveries) {
                part.deadLetters[key.firingId] = firing
                part.deadLetterFailures[key.firingId] = deadLetterFailures[key.firingId]
                part.deadLetterIndex.insert(key)
            }
            if isSliced(firing.recipient) { put(&slice) } else { put(&rest) }
        }
        for (id, firing) in nagFirings {
            func put(_ part: inout Deliveries) {
                part.nagFirings[id] = firing
                if let deadline = nags.deadline(of: id) { part.nags.schedule(id, at: deadline) }
            }
            if isSliced(firing.recipient) { put(&slice) } else { put(&rest) }
        }
        for (id, firing) in heldFirings {
            func put(_ part: inout Deliveries) {
                part.heldFirings[id] = firing
                part.holdReasons[id] = holdReasons[id]
                if let until = holds.deadline(of: id) { part.holds.schedule(id, at: until) }
            }
            if isSliced(firing.recipient) { put(&slice) } else { put(&rest) }
        }
        // The stream's history stays with the shard that published it (see `split(where:)`).
        rest.eventLog = eventLog
        slice.eventSeqReserved = eventSeqReserved
        rest.eventSeqReserved = eventSeqReserved
        slice.rebuildAhead()
        rest.rebuildAhead()
        slice.rebuildThrottleHeld()
        rest.rebuildThrottleHeld()
        return (slice, rest)
    }

    mutating func merge(_ other: Deliveries) {
        unsettled.merge(other.unsettled) { mine, _ in mine }
        retrySkips.merge(other.retrySkips) { mine, _ in mine }
        for key in other.deadLetterIndex {
            guard let firing = other.deadLetters[key.firingId], deadLetters[key.firingId] == nil else { continue }
            deadLetters[key.firingId] = firing
            deadLetterFailures[key.firingId] = other.deadLetterFailures[key.firingId]
            deadLetterIndex.insert(key)
        }
        for (id, firing) in other.nagFirings where nagFirings[id] == nil {
            nagFirings[id] = firing
            if let deadline = other.nags.deadline(of: id) { nags.schedule(id, at: deadline) }
        }
        for (id, firing) in other.heldFirings where heldFirings[id] == nil {
            heldFirings[id] = firing
            holdReasons[id] = other.holdReasons[id]
            if let until = other.holds.deadline(of: id) { holds.schedule(id, at: until) }
        }
        eventLog.merge(other.eventLog)
        eventSeqReserved = max(eventSeqReserved, other.eventSeqReserved)
        if !other.unsettled.isEmpty { rebuildAhead() }
        if !other.heldFirings.isEmpty { rebuildThrottleHeld() }
    }
}

extension Recipients {
    func split(_ isSliced: (RecipientID) -> Bool) -> (slice: Recipients, rest: Recipients) {
        var slice = Recipients()
        var rest = Recipients()
        for (id, recipient) in registered {
            if isSliced(id) { slice.store(recipient) } else { rest.store(recipient) }
        }
        for (id, ledger) in ledgers {
            if isSliced(id) { slice.ledgers[id] = ledger } else { rest.ledgers[id] = ledger }
        }
        for (id, slots) in throttleSlots {
            if isSliced(id) { slice.throttleSlots[id] = slots } else { rest.throttleSlots[id] = slots }
        }
        slice.badgeEventSeq = badgeEventSeq
        rest.badgeEventSeq = badgeEventSeq
        return (slice, rest)
    }

    mutating func merge(_ other: Recipients) {
        for (id, recipient) in other.registered where registered[id] == nil { store(recipient) }
        for (id, ledger) in other.ledgers where ledgers[id] == nil {
            ledgers[id] = ledger
            if !tenants.isEmpty { tenants.add(reminders: 0, bytes: ledger.storedBytes, of: id) }
        }
        throttleSlots.merge(other.throttleSlots) { mine, _ in mine }
        badgeEventSeq = max(badgeEventSeq, other.badgeEventSeq)
    }
}
