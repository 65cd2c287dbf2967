import ChimeCore
import ChimeStore
import ChimeWire
import Foundation

/// Recipients, badges, the delivered list and the on/off switch: the rules of
/// `UNUserNotificationCenter` and `applicationIconBadgeNumber`, per recipient.
extension CoordinatorState {
    mutating func register(_ recipient: Recipient, at now: Date, directives: inout [CoordinatorDirective]) -> ControlOutcome {
        do {
            try recipient.validate()
        } catch {
            var wire = WireError(error)
            wire.field = wire.field.map { "recipient.\($0)" } ?? "recipient"
            return .failed(wire)
        }
        record(.registered(recipient, at: now), into: &directives)
        return .recipient(RecipientResult(
            recipient: recipient.redacted(), badge: ledgers[recipient.id]?.badge ?? 0,
            deliveredCount: ledgers[recipient.id]?.delivered.count ?? 0))
    }

    func recipientResult(_ id: RecipientID) -> RecipientResult? {
        guard let recipient = recipients[id] else { return nil }
        let ledger = ledgers[id] ?? BadgeLedger()
        return RecipientResult(recipient: recipient.redacted(), badge: ledger.badge, deliveredCount: ledger.delivered.count)
    }

    /// Applies a badge update and publishes one event when the number changed.
    mutating func publishBadge(_ update: BadgeUpdate, of recipient: RecipientID, at now: Date,
                               directives: inout [CoordinatorDirective]) {
        guard update.isChanged else { return }
        badgeEventSeq += 1
        directives.append(.publish(.badge(BadgeEvent(seq: badgeEventSeq, recipient: recipient, badge: update.badge, at: now))))
    }

    mutating func setBadge(_ recipient: RecipientID, to value: Int, at now: Date, directives: inout [CoordinatorDirective])
        -> ControlOutcome
    {
        let update = record(.badgeSet(recipient, value, at: now), into: &directives).badge ?? BadgeUpdate(badge: 0, isChanged: false)
        publishBadge(update, of: recipient, at: now, directives: &directives)
        return .badge(BadgeResult(recipient: recipient, badge: update.badge, changed: update.isChanged))
    }

    /// The recipient a firing id belongs to: its reminder's, else the ledger that lists it.
    func recipient(of firingId: FiringID) -> RecipientID? {
        if let entry = entries[firingId.reminder] {
            return entry.recipient
        }
        return ledgers.first { $0.value.isDelivered(firingId.nagBase) }?.key
    }

    /// Marks a delivered firing handled: it leaves the delivered list and the badge falls by one.
    mutating func handle(_ firingId: FiringID, action: String?, at now: Date, directives: inout [CoordinatorDirective])
        -> BadgeResult?
    {
        guard let recipient = recipient(of: firingId) else { return nil }
        let update = record(.handled(firingId, action: action, at: now), into: &directives).badge
            ?? BadgeUpdate(badge: ledgers[recipient]?.badge ?? 0, isChanged: false)
        publishBadge(update, of: recipient, at: now, directives: &directives)
        return BadgeResult(recipient: recipient, badge: update.badge, changed: update.isChanged)
    }

    mutating func delivered(_ recipient: RecipientID, remove: FiringID?, at now: Date,
                            directives: inout [CoordinatorDirective]) -> ControlOutcome {
        if let remove {
            if let update = record(.deliveredRemoved(recipient, remove, at: now), into: &directives).badge {
                publishBadge(update, of: recipient, at: now, directives: &directives)
            }
        }
        let ledger = ledgers[recipient] ?? BadgeLedger()
        return .delivered(DeliveredResult(recipient: recipient, badge: ledger.badge, delivered: ledger.delivered))
    }

    /// Switches reminders on or off. Enabling computes the next occurrence from `now` (no burst
    /// of missed ones); disabling keeps the record and disarms it.
    mutating func setEnabled(_ ids: [ReminderID], _ enabled: Bool, at now: Date, directives: inout [CoordinatorDirective])
        -> ControlOutcome
    {
        let missing = ids.filter { entries[$0] == nil }
        if !missing.isEmpty {
            return .failed(WireError(.notFound, "no reminder \(missing.map(\.rawValue).joined(separator: ", "))", field: "ids"))
        }
        let changed = Set(ids).sorted().filter { entries[$0].map { $0.reminder.enabled != enabled } ?? false }
        for run in Self.recordSizedRuns(of: changed) {
            record(.switched(Array(run), enabled: enabled, at: now), into: &directives)
        }
        return .switched(SwitchResult(changed: changed))
    }

    /// The switch itself (the fold of `.switched`). Enabling computes the next occurrence from
    /// `now`; disabling keeps the record and disarms it.
    mutating func switchReminders(_ ids: [ReminderID], _ enabled: Bool, at now: Date) {
        for id in Set(ids).sorted() {
            guard var entry = entries[id] else { continue }
            var reminder = entry.reminder
            guard reminder.enabled != enabled else { continue }
            reminder.enabled = enabled
            entry.reminder = reminder
            if enabled {
                entry.next = recurrence(of: reminder).flatMap { firstFiring(of: reminder, in: $0, onOrAfter: now) }
                if let next = entry.next {
                    entry.state = .pending
                    arm(id, of: reminder.recipient, at: fireInstant(of: reminder, next))
                } else {
                    entry.state = reminder.trigger.isRepeating ? .finished : .delivered
                }
            } else {
                entry.state = .disabled
                disarm(id, of: reminder.recipient)
            }
            entries[id] = entry
        }
    }

    /// When an occurrence (an event) fires: its instant less the trigger's remind-before offset.
    func fireInstant(of reminder: Reminder, _ occurrence: Occurrence) -> Date {
        reminder.trigger.fireInstant(eventInstant: occurrence.instant)
    }

    /// The first event whose firing is at or after `instant`.
    func firstFiring(of reminder: Reminder, in recurrence: Recurrence, onOrAfter instant: Date) -> Occurrence? {
        reminder.trigger.firstEvent(firingOnOrAfter: instant, in: recurrence)
    }

    /// What is delivered of `content` to `recipient`, or why nothing is.
    func deliveryPlan(_ content: Content, for recipient: RecipientID) -> DeliveryPlan {
        // Most clusters register no recipients: skip hashing the id then (every firing asks).
        DeliveryPlan.make(
            for: content, settings: recipients.isEmpty ? nil : recipients[recipient]?.settings,
            requireRegistration: configuration.requireRegistration)
    }
}
