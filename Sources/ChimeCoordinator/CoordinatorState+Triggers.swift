import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

/// The decisions of the trigger operations (issue 41): each validates, records one
/// `.trigger` entry whose fold does the change, and answers.
extension CoordinatorState {
    /// Answers a trigger operation.
    mutating func trigger(_ command: TriggerCommand, at now: Date, directives: inout [CoordinatorDirective]) -> ControlOutcome {
        switch command {
        case .locate(let recipient, let point, let accuracy, let at):
            // Whole milliseconds, as a firing id names its due instant (and a snapshot keeps it).
            let report = LocationReport(point: point, accuracy: accuracy, at: (at ?? now).roundedToMillisecond)
            return locate(recipient, report, at: now, directives: &directives)
        case .setCalendar(let name, let calendar):
            record(.trigger(.calendarSet(name: name, calendar: calendar, at: now)), into: &directives)
            return .trigger(.calendar(calendarResult(name)))
        case .deleteCalendar(let name):
            guard durable.triggers.calendars[name] != nil else {
                return .failed(WireError(.notFound, "no calendar \(name)", field: "name"))
            }
            record(.trigger(.calendarSet(name: name, calendar: nil, at: now)), into: &directives)
            return .trigger(.calendar(calendarResult(name)))
        case .calendars(let name):
            if let name {
                guard durable.triggers.calendars[name] != nil else { return .failed(WireError(.notFound, "no calendar \(name)", field: "name")) }
                return .trigger(.calendars(CalendarsResult(calendars: [calendarResult(name)])))
            }
            return .trigger(.calendars(CalendarsResult(calendars: durable.triggers.calendars.keys.sorted().map(calendarResult))))
        case .fireNow, .backfill, .setRemaining:
            break
        }
        guard let key = command.reminder, let entry = entries[key] else {
            let key = command.reminder ?? ReminderKey("", of: "")
            return .failed(WireError(.notFound, "no reminder \(key.id.rawValue) of \(key.recipient.rawValue)", field: "id"))
        }
        switch command {
        case .fireNow:
            let dueAt = now.roundedToMillisecond
            let made = record(.trigger(.firedNow(key, dueAt: dueAt, at: now)), into: &directives).triggered
            dispatch.waiting.append(contentsOf: made)
            return .trigger(.firedNow(TriggerNowResult(firingId: FiringID(key, dueAt: dueAt))))
        case .backfill(_, _, let from, let to):
            return backfill(key, entry: entry, from: from, to: min(to, now), at: now, directives: &directives)
        case .locate, .setCalendar, .deleteCalendar, .calendars:
            return .failed(WireError(.internal, "\(command.operation.rawValue) was answered above"))
        case .setRemaining(_, _, let count):
            record(.trigger(.remainingSet(key, count: count, at: now)), into: &directives)
            let after = entries[key]
            let state = after?.state ?? entry.state
            return .trigger(.remaining(RemainingResult(
                id: key.id, remaining: durable.triggers.remaining[key], state: state,
                nextFireAt: state == .pending ? after?.next.flatMap { after?.fireInstant(of: $0) } : nil)))
        }
    }

    /// Fires the occurrences of `key` whose fire instants lie in `from...to` and have not
    /// fired: not covered by an earlier backfill and not a firing Chime still knows.
    private mutating func backfill(
        _ key: ReminderKey, entry: Entry, from: Date, to: Date, at now: Date, directives: inout [CoordinatorDirective]
    ) -> ControlOutcome {
        guard from <= to else {
            return .failed(WireError(.invalidArgument, "the range must start before now", field: "from"))
        }
        let reminder = entry.reminder
        let trigger = reminder.trigger
        var dueAts: [Date] = []
        if let recurrence = recurrence(of: reminder) {
            // A spread firing is at most a spread later than its event less the offset.
            let events = recurrence.occurrences(
                onOrAfter: trigger.earliestEvent(firingOnOrAfter: from), through: trigger.eventInstant(fireInstant: to),
                limit: TriggerCommand.maximumBackfill * 2 + 1)
            dueAts = events.map { reminder.fireInstant(eventInstant: $0.instant) }.filter { $0 >= from && $0 <= to }.sorted()
        }
        guard dueAts.count <= TriggerCommand.maximumBackfill else {
            return .failed(WireError(
                .tooLarge, "the range holds more than \(TriggerCommand.maximumBackfill) occurrences: backfill a shorter one",
                field: "to"))
        }
        let fresh = dueAts.filter { !durable.triggers.isCovered($0, of: key) && !durable.knowsFiring(FiringID(key, dueAt: $0)) }
        let made = record(.trigger(.backfilled(key, from: from, through: to, dueAts: fresh, at: now)), into: &directives).triggered
        dispatch.waiting.append(contentsOf: made)
        return .trigger(.backfilled(BackfillResult(fired: fresh.map { FiringID(key, dueAt: $0) }, alreadyFired: dueAts.count - fresh.count)))
    }

    /// Records `disable --note` (and clears a note when reminders are switched on again).
    mutating func noteSwitch(
        _ ids: [ReminderID], of recipient: RecipientID?, enabled: Bool, note: String?, after outcome: ControlOutcome,
        for client: ClientAddress, at now: Date, directives: inout [CoordinatorDirective]
    ) {
        guard case .switched = outcome else { return }
        let keys = durable.keys(named: Array(Set(ids)).sorted(), of: recipient, after: nil).filter { client.sees($0.recipient) }
        if enabled {
            let noted = keys.filter { durable.triggers.notes[$0] != nil }
            if !noted.isEmpty { record(.trigger(.noted(noted, note: nil, at: now)), into: &directives) }
        } else if let note, !keys.isEmpty {
            record(.trigger(.noted(Array(keys), note: note, at: now)), into: &directives)
        }
    }
}

extension CoordinatorState {
    /// How far ahead of the coordinator's clock a location report may be dated, in seconds.
    static let locationClockSkew: Double = 60

    /// Takes a location report: refused when dated more than a minute ahead, ignored (not
    /// journaled) when not later than the recipient's last; otherwise journaled as
    /// `.located`, whose fold detects the crossings and makes their firings.
    mutating func locate(
        _ recipient: RecipientID, _ report: LocationReport, at now: Date, directives: inout [CoordinatorDirective]
    ) -> ControlOutcome {
        guard report.at <= now.addingTimeInterval(Self.locationClockSkew) else {
            return .failed(WireError(.invalidArgument, "at is more than a minute ahead of the coordinator's clock", field: "at"))
        }
        if let last = durable.triggers.locations[recipient], report.at <= last.at {
            return .trigger(.located(LocateResult(recipient: recipient, accepted: false, crossings: [])))
        }
        let crossings = durable.crossings(of: recipient, report).compactMap { item -> (ReminderKey, RegionCrossing)? in
            item.crossing.map { (item.key, $0) }
        }
        let made = record(.trigger(.located(recipient, report, at: now)), into: &directives).triggered
        dispatch.waiting.append(contentsOf: made)
        let fired = Dictionary(made.map { ($0.firing.firingId.key, $0.firing.firingId) }, uniquingKeysWith: { first, _ in first })
        return .trigger(.located(LocateResult(
            recipient: recipient, accepted: true,
            crossings: crossings.map { LocateResult.Crossing(id: $0.0.id, crossing: $0.1, firingId: fired[$0.0]) })))
    }

    /// A calendar as `setCalendar`, `deleteCalendar` and `calendars` answer it.
    func calendarResult(_ name: String) -> CalendarResult {
        CalendarResult(
            name: name, calendar: durable.triggers.calendars[name], reminders: durable.triggers.calendarUsers[name]?.count ?? 0)
    }

    /// Refuses a reminder naming a calendar this shard does not hold.
    /// - Throws: `ValidationError` `.invalidArgument` with field `trigger.calendars`.
    func checkCalendarsExist(_ reminder: Reminder) throws(ValidationError) {
        guard let missing = durable.unknownCalendars(of: reminder).first else { return }
        throw ValidationError(
            .invalidArgument, field: "trigger.calendars",
            "no calendar \(missing) on this shard: set it first (chime calendar set \(missing) …)")
    }
}
