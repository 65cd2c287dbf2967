import ChimeCore
import ChimeStore
import ChimeWire
import Foundation

/// Recipients, badges, the delivered list and the on/off switch: the rules of
/// `UNUserNotificationCenter` and `applicationIconBadgeNumber`, per recipient.
extension CoordinatorState {
    /// Stores `recipient` (replacing its registration; absent destinations keep those held).
    /// - Parameters:
    ///   - client: the caller, whose key's byte quota a growing registration is counted
    ///     against (``registrationQuotaRefusal(storing:for:field:)``); `nil` for none.
    ///   - quotaField: the request field a quota refusal names.
    /// - Returns: the recipient, redacted; `invalid_argument` for a registration that does not
    ///   validate; `too_large` for one that grows past `limits.maxRegistrationBytes`;
    ///   `quota_exceeded` (nothing journaled) past the caller's byte quota. The
    ///   registration held already, byte for byte, journals nothing and answers the same.
    mutating func register(
        _ recipient: Recipient, for client: ClientAddress?, quotaField: String = "recipient", at now: Date,
        directives: inout [CoordinatorDirective]
    ) -> ControlOutcome {
        var recipient = recipient
        // Absent destinations keep those registered: `chime register alice --zone …` must not
        // drop alice's webhooks.
        if recipient.destinations == nil { recipient.destinations = recipients[recipient.id]?.destinations }
        if recipient.destinations?.isEmpty == true { recipient.destinations = nil }
        do {
            try recipient.validate()
        } catch {
            var wire = WireError(error)
            wire.field = wire.field.map { "recipient.\($0)" } ?? "recipient"
            return .failed(wire)
        }
        // The same registration again changes nothing: it journals nothing either, so repeating
        // it cannot grow the journal (issue 37).
        if recipients[recipient.id] != recipient {
            // Each size measured once (a JSON encoding each) for both checks, the one replaced
            // only when a check reads it (past the size limit, or a caller with a quota).
            let bytes = recipient.storedBytes
            let readsPrevious = bytes > configuration.maxRegistrationBytes || client?.scope != nil
            let sizes = (bytes: bytes, previous: readsPrevious ? recipients[recipient.id]?.storedBytes ?? 0 : 0)
            if let refusal = registrationSizeRefusal(of: recipient.id, sizes: sizes, field: quotaField) { return .failed(refusal) }
            if let refusal = registrationQuotaRefusal(of: recipient.id, sizes: sizes, for: client, field: quotaField) {
                return .failed(refusal)
            }
            record(.registered(recipient, at: now), into: &directives)
        }
        return .recipient(RecipientResult(
            recipient: recipient.redacted(), badge: ledgers[recipient.id]?.badge ?? 0,
            deliveredCount: ledgers[recipient.id]?.delivered.count ?? 0))
    }

    func recipientResult(_ id: RecipientID) -> RecipientResult? {
        guard let recipient = recipients[id] else { return nil }
        let ledger = ledgers[id] ?? BadgeLedger()
        return RecipientResult(recipient: recipient.redacted(), badge: ledger.badge, deliveredCount: ledger.delivered.count)
    }

    /// Publishes the badge event of an update that changed the number (the fold numbered it).
    func publishBadge(_ update: NumberedBadgeUpdate, of recipient: RecipientID, at now: Date,
                      directives: inout [CoordinatorDirective]) {
        guard update.update.isChanged, let seq = update.seq else { return }
        var event = BadgeEvent(seq: seq, recipient: recipient, badge: update.update.badge, at: now)
        event.shard = configuration.eventShard
        directives.append(.publish(.badge(event)))
    }

    mutating func setBadge(_ recipient: RecipientID, to value: Int, at now: Date, directives: inout [CoordinatorDirective])
        -> ControlOutcome
    {
        let numbered = record(.badgeSet(recipient, value, at: now), into: &directives).numberedBadge
        let update = numbered?.update ?? BadgeUpdate(badge: 0, isChanged: false)
        if let numbered { publishBadge(numbered, of: recipient, at: now, directives: &directives) }
        return .badge(BadgeResult(recipient: recipient, badge: update.badge, changed: update.isChanged))
    }

    /// The recipient a firing id belongs to: its reminder's, else the ledger that lists it.
    func recipient(of firingId: FiringID) -> RecipientID? { durable.recipient(of: firingId) }

    /// Marks a delivered firing handled: it leaves the delivered list and the badge falls by one.
    mutating func handle(_ firingId: FiringID, action: String?, at now: Date, directives: inout [CoordinatorDirective])
        -> BadgeResult?
    {
        // A firing id of an earlier version names no recipient: journaled resolved.
        guard let firingId = durable.resolve(firingId) else { return nil }
        let recipient = firingId.recipient
        // Handling a listed firing changes the list even when the badge stays (no badge change, or 0).
        let wasListed = ledgers[recipient]?.isDelivered(firingId) ?? false
        let numbered = record(.handled(firingId, action: action, at: now), into: &directives).numberedBadge
        let update = numbered?.update ?? BadgeUpdate(badge: ledgers[recipient]?.badge ?? 0, isChanged: false)
        if let numbered { publishBadge(numbered, of: recipient, at: now, directives: &directives) }
        return BadgeResult(recipient: recipient, badge: update.badge, changed: wasListed || update.isChanged)
    }

    /// `delivered`: removes `remove` from `recipient`'s delivered list (journaled), then
    /// answers one page of the list, newest first: from the start, or after `cursor`'s
    /// firing, at most `limit` firings (all when `nil`), with a `nextCursor` when more follow.
    /// The reply's bytes are bounded when it is encoded (``ReplyBudget``).
    ///
    /// A cursor names the previous page's last firing and its position; when that firing left
    /// the list between the pages (handled, or pushed out past the list's limit), the page
    /// starts at the position it had (a firing may then be skipped or shown twice, never an error).
    /// - Returns: `.delivered`, or `invalid_argument` (field `cursor`) for a cursor whose key
    ///   is not a position and a firing id.
    mutating func delivered(_ recipient: RecipientID, remove: FiringID?, limit: Int? = nil, cursor: PageCursor? = nil,
                            at now: Date, directives: inout [CoordinatorDirective]) -> ControlOutcome {
        var start = 0
        if let cursor {
            guard let key = cursor.deliveredKey else {
                return .failed(WireError(.invalidArgument, "the cursor is not valid; pass back a nextCursor unchanged", field: "cursor"))
            }
            start = key.position
            if let ledger = ledgers[recipient] {
                start = ledger.delivered.firstIndex { $0.firingId.description == key.firingId }.map { $0 + 1 } ?? start
            }
        }
        if let remove {
            let remove = remove.isLegacy ? remove.resolved(to: recipient) : remove
            if let update = record(.deliveredRemoved(recipient, remove, at: now), into: &directives).numberedBadge {
                publishBadge(update, of: recipient, at: now, directives: &directives)
            }
        }
        let ledger = ledgers[recipient] ?? BadgeLedger()
        let all = ledger.delivered
        start = min(max(0, start), all.count)
        let end = limit.map { min(all.count, start + max(1, $0)) } ?? all.count
        var result = DeliveredResult(recipient: recipient, badge: ledger.badge, delivered: Array(all[start..<end]), offset: start)
        if end < all.count, end > start { result.nextCursor = result.cursor(after: end - start - 1).text }
        return .delivered(result)
    }

    /// Switches reminders on or off: `recipient`'s with these ids, or every recipient's when
    /// it is absent. Enabling computes the next occurrence from `now` (no burst of missed
    /// ones); disabling keeps the record and disarms it.
    mutating func setEnabled(
        _ ids: [ReminderID], of recipient: RecipientID?, _ enabled: Bool, for client: ClientAddress? = nil, at now: Date,
        directives: inout [CoordinatorDirective]
    ) -> ControlOutcome {
        let named = Array(Set(ids)).sorted()
        let keys = durable.keys(named: named, of: recipient, after: nil).filter { client?.sees($0.recipient) ?? true }
        let found = Set(keys.map(\.id))
        let missing = named.filter { !found.contains($0) }
        if !missing.isEmpty {
            let whose = recipient.map { " of \($0)" } ?? ""
            return .failed(WireError(.notFound, "no reminder \(missing.map(\.rawValue).joined(separator: ", "))\(whose)", field: "ids"))
        }
        let changed = keys.filter { entries[$0].map { $0.reminder.enabled != enabled } ?? false }
        for run in Self.recordSizedRuns(of: changed) {
            record(.switched(Array(run), enabled: enabled, at: now), into: &directives)
        }
        return .switched(SwitchResult(changed: changed.map(\.id)))
    }

    /// When an occurrence (an event) fires: its instant less the trigger's remind-before offset.
    func fireInstant(of reminder: Reminder, _ occurrence: Occurrence) -> Date {
        reminder.fireInstant(eventInstant: occurrence.instant)
    }

    /// When `entry`'s occurrence fires (decoding the reminder only when it has an offset).
    static func fireInstant(of entry: Entry, _ occurrence: Occurrence) -> Date { entry.fireInstant(of: occurrence) }

    /// The first event whose firing is at or after `instant`.
    func firstFiring(of reminder: Reminder, in recurrence: Recurrence, onOrAfter instant: Date) -> Occurrence? {
        durable.firstFiring(of: reminder, in: recurrence, onOrAfter: instant)
    }

    /// What is delivered of `content` to `recipient`, or why nothing is.
    func deliveryPlan(_ content: Content, for recipient: RecipientID) -> DeliveryPlan {
        durable.deliveryPlan(content, for: recipient)
    }

    /// When a firing of `content` for `recipient`, delivered at `instant`, leaves quiet hours;
    /// `nil`: deliver it now.
    func quietRelease(of content: Content, for recipient: RecipientID, at instant: Date) -> Date? {
        durable.quietRelease(of: content, for: recipient, at: instant)
    }

    /// The occurrence sequence of `reminder` (cached for a repeating one).
    func recurrence(of reminder: Reminder) -> Recurrence? { durable.recurrence(of: reminder) }

    /// Validates a reminder (with its recipient's zone) and builds its occurrences.
    /// - Throws: `ValidationError` naming the first offending field.
    func validate(_ reminder: Reminder, maximumUserInfoBytes: Int) throws(ValidationError) -> Recurrence {
        let recurrence = try durable.validate(reminder, maximumUserInfoBytes: maximumUserInfoBytes)
        try checkCalendarsExist(reminder)
        return recurrence
    }

    /// The cap on `recipient`'s armed reminders (`nil`: none).
    func pendingLimit(for recipient: RecipientID) -> Int? { durable.pendingLimit(for: recipient) }

    /// Whether a pending reminder is armed (always, without a cap).
    func isArmed(_ id: ReminderKey, of recipient: RecipientID) -> Bool { durable.schedule.isArmed(id, of: recipient) }

    /// The `timeZone` value that means "the recipient's zone".
    static var recipientZone: String { DurableState.recipientZone }
}
