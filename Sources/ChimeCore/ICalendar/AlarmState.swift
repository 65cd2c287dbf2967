import Foundation

/// One alarm to import: its label in the reminder id, its timing and its recorded state.
struct PlannedAlarm {
    var label: String
    var timing: AlarmTiming
    var state = AlarmState()
}

/// What calendar clients recorded about an alarm: acknowledged or snoozed up to an instant.
///
/// - RFC 9074 §6.1: `ACKNOWLEDGED` (UTC) "greater than or equal to the computed trigger
///   time" means that instant is not fired; Thunderbird writes the same as `X-MOZ-LASTACK`
///   on the VEVENT or VTODO, for all its alarms.
/// - RFC 9074 §7: snoozing adds a VALARM with an absolute TRIGGER and
///   `RELATED-TO;RELTYPE=SNOOZE:<UID of the snoozed alarm>`; it fires at its own instant and
///   the snoozed alarm's instants up to it are replaced. Thunderbird writes
///   `X-MOZ-SNOOZE-TIME` (or `X-MOZ-SNOOZE-TIME-<recurrence id in µs>` for one occurrence
///   of a series) on the component instead: an extra one-shot at that instant, replacing
///   every alarm's instants up to it.
struct AlarmState: Hashable, Sendable {
    /// Instants at or before this are acknowledged.
    var acknowledged: Date?
    /// Instants at or before this are replaced by a snooze that fires later.
    var snoozedUntil: Date?

    /// The last instant not to fire, if any.
    var cutoff: Date? {
        switch (acknowledged, snoozedUntil) {
        case (let ack?, let snooze?): max(ack, snooze)
        case (let ack?, nil): ack
        case (nil, let snooze?): snooze
        case (nil, nil): nil
        }
    }

    /// Whether the cutoff is a snooze's (counted as snoozed rather than acknowledged).
    var isSnoozed: Bool { snoozedUntil != nil && snoozedUntil == cutoff }

    /// The state of each of `alarms` (the VALARMs of `component`, in order).
    static func read(_ component: ICalendarComponent, alarms: [ICalendarComponent], zones: ICalendarZones) -> [AlarmState] {
        let lastAcknowledged = instant(component.property("X-MOZ-LASTACK"), zones: zones)
        var states = alarms.map { alarm in
            AlarmState(acknowledged: latest(instant(alarm.property("ACKNOWLEDGED"), zones: zones), lastAcknowledged))
        }
        var isSnooze = [Bool](repeating: false, count: alarms.count)
        for (index, alarm) in alarms.enumerated() {
            guard let related = alarm.properties(named: "RELATED-TO").first(where: {
                $0.parameter("RELTYPE")?.uppercased() == "SNOOZE"
            }) else { continue }
            isSnooze[index] = true
            // A snooze alarm whose TRIGGER cannot be read replaces nothing; its own import reports it.
            guard case .absolute(let until)? = (try? AlarmTiming.parse(alarm, zones: zones))?.first else { continue }
            let target = related.text.trimmingCharacters(in: .whitespaces)
            for (other, candidate) in alarms.enumerated()
            where other != index && candidate.property("UID")?.text.trimmingCharacters(in: .whitespaces) == target {
                states[other].snoozedUntil = latest(states[other].snoozedUntil, until)
            }
        }
        if let mozillaSnooze = mozillaSnoozes(of: component, zones: zones).map(\.instant).max() {
            for index in states.indices where !isSnooze[index] {
                states[index].snoozedUntil = latest(states[index].snoozedUntil, mozillaSnooze)
            }
        }
        return states
    }

    /// Thunderbird's snoozes of `component`: one extra one-shot alarm each.
    static func mozillaSnoozes(of component: ICalendarComponent, zones: ICalendarZones)
        -> [(label: String, instant: Date, state: AlarmState)]
    {
        let lastAcknowledged = instant(component.property("X-MOZ-LASTACK"), zones: zones)
        return component.properties.compactMap { property in
            guard property.name == "X-MOZ-SNOOZE-TIME" || property.name.hasPrefix("X-MOZ-SNOOZE-TIME-"),
                let until = instant(property, zones: zones)
            else { return nil }
            return (property.name.lowercased(), until, AlarmState(acknowledged: lastAcknowledged))
        }
    }

    /// `reminder` as it should be scheduled given `state` and the past cutoff `now`, or
    /// `nil` when nothing of it is left to fire (counted in `summary`). Occurrences of a
    /// repeating reminder up to the state's cutoff (and after `now`) become EXDATEs.
    /// - Throws: `ImportProblem` when the trigger cannot be expanded.
    static func apply(
        _ state: AlarmState, to reminder: Reminder, skippingBefore now: Date?, summary: inout CalendarImportSummary
    ) throws(ImportProblem) -> Reminder? {
        var reminder = reminder
        func countCutoff() {
            if state.isSnoozed { summary.snoozed += 1 } else { summary.acknowledged += 1 }
        }
        do {
            if !reminder.trigger.isRepeating {
                guard let fire = try reminder.fireInstants(from: .distantPast, through: .distantFuture, limit: 1).first else {
                    return nil
                }
                if let cutoff = state.cutoff, fire <= cutoff {
                    countCutoff()
                    return nil
                }
                if let now, fire < now {
                    summary.past += 1
                    return nil
                }
                return reminder
            }
            var replaced: [Date] = []
            if let cutoff = state.cutoff {
                replaced = try reminder.fireInstants(from: now ?? .distantPast, through: cutoff, limit: 1000)
                let offset = reminder.trigger.offset ?? 0
                reminder.trigger.exceptionDates += replaced.map { .instant($0.addingTimeInterval(offset)) }
            }
            if let now, try reminder.fireInstants(from: now, through: .distantFuture, limit: 1).isEmpty {
                if replaced.isEmpty { summary.past += 1 } else { countCutoff() }
                return nil
            }
            return reminder
        } catch {
            throw ImportProblem(error.message)
        }
    }

    private static func instant(_ property: ICalendarProperty?, zones: ICalendarZones) -> Date? {
        guard let property else { return nil }
        // A malformed state property is ignored: the alarm then fires as if none were written.
        return try? zones.time(property.value, tzid: property.parameter("TZID")).instant
    }

    private static func latest(_ first: Date?, _ second: Date?) -> Date? {
        switch (first, second) {
        case (let a?, let b?): max(a, b)
        case (let a?, nil): a
        case (nil, let b?): b
        case (nil, nil): nil
        }
    }
}
