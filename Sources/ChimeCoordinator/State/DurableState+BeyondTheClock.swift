import ChimeCore
import ChimeJournal
import Foundation

/// Calendars, locations, regions and the sun in the fold (issue 41): how a reminder's
/// occurrences take its recipient's place and its calendars into account, and what a
/// calendar change or a location report changes.
extension DurableState {
    /// `recurrence` (of `reminder`, recipient zone resolved) with what the state adds: the
    /// recipient's last place for a sun trigger that follows it, and the exclusion calendars.
    func beyondTheClock(_ recurrence: Recurrence, of reminder: Reminder) -> Recurrence {
        let trigger = reminder.trigger
        guard trigger.sun != nil || !trigger.calendars.isEmpty else { return recurrence }
        let place = trigger.followsRecipientPlace ? triggers.locations[reminder.recipient]?.point : nil
        return (try? trigger.makeRecurrence(place: place, exclusion: exclusion(of: reminder))) ?? recurrence
    }

    /// The calendars `reminder` names that this shard holds, in its recipient's zone (UTC
    /// until it registers one); `nil` when it names none that exist.
    func exclusion(of reminder: Reminder) -> OccurrenceExclusion? {
        guard !reminder.trigger.calendars.isEmpty else { return nil }
        let found = reminder.trigger.calendars.compactMap { name in triggers.calendars[name].map { (name: name, calendar: $0) } }
        guard !found.isEmpty else { return nil }
        let zoneName = recipients.registered[reminder.recipient]?.zone ?? "UTC"
        let zone = (try? ZoneRules.zone(named: zoneName)) ?? TimeZone(secondsFromGMT: 0) ?? .current
        return OccurrenceExclusion(calendars: found, zone: zone)
    }

    /// Whether a pending reminder without a next occurrence waits rather than being finished:
    /// a region reminder (it fires on crossings), or a sun reminder whose recipient has not
    /// reported a place yet.
    func waitsWithoutTime(_ reminder: Reminder) -> Bool {
        reminder.trigger.isRegion || (reminder.trigger.followsRecipientPlace && triggers.locations[reminder.recipient] == nil)
    }

    /// The names a reminder gives that this shard has no calendar of (the live schedule
    /// refuses them; the fold treats them as excluding nothing).
    func unknownCalendars(of reminder: Reminder) -> [String] {
        reminder.trigger.calendars.filter { triggers.calendars[$0] == nil }
    }

    /// Rebuilds the derived trigger indexes (regions, calendar users, place followers) from
    /// the schedule: after a snapshot load or a slice change.
    mutating func rebuildTriggerIndexes() {
        triggers.regions = RegionIndex()
        triggers.regionsOf = [:]
        triggers.calendarUsers = [:]
        triggers.placeFollowers = [:]
        for key in schedule.index {
            guard let entry = schedule.entries[key], entry.usesTriggerState else { continue }
            triggers.track(key, entry.reminder.trigger)
        }
    }

    /// Re-plans a reminder after what its occurrences depend on changed (a calendar, its
    /// recipient's zone or place): its sequence is rebuilt and a pending one moves to its
    /// first occurrence from `now` (a one-shot keeps its only one); one a calendar or a
    /// place left without any is finished (or waits, see ``waitsWithoutTime(_:)``), and a
    /// finished one that has occurrences again is pending again.
    mutating func replan(_ key: ReminderKey, at now: Date) {
        guard var entry = schedule.entries[key] else { return }
        let reminder = entry.reminder
        guard let recurrence = try? validate(reminder, maximumUserInfoBytes: Int.max) else { return }
        let trigger = reminder.trigger
        if trigger.isRepeating { schedule.recurrences[key] = recurrence }
        let isRevivable = entry.state == .finished && triggers.remaining[key] != 0 && reminder.enabled
        guard entry.state == .pending || isRevivable, !trigger.isRegion else { return }
        let next = trigger.isRepeating
            ? firstFiring(of: reminder, in: recurrence, onOrAfter: now)
            : recurrence.occurrence(at: 0).map { Occurrence(index: 0, instant: $0) }
        if isRevivable && (next == nil || !trigger.isRepeating && (next.map { entry.fireInstant(of: $0) < now } ?? true)) { return }
        entry.next = next
        if let next {
            entry.state = .pending
            schedule.arm(key, of: entry.recipient, at: entry.fireInstant(of: next), limit: pendingLimit(for: entry.recipient))
        } else {
            entry.state = waitsWithoutTime(reminder) ? .pending : .finished
            schedule.disarm(key, of: entry.recipient)
        }
        schedule.entries[key] = entry
    }

    /// Re-plans `recipient`'s reminders that name calendars (its zone changed).
    mutating func replanCalendarUsers(of recipient: RecipientID, at now: Date) {
        guard !triggers.calendarUsers.isEmpty else { return }
        let keys = Set(triggers.calendarUsers.values.joined().filter { $0.recipient == recipient })
        for key in keys.sorted() { replan(key, at: now) }
    }

    /// The fold of `.calendarSet`: the shard's copy changes and every reminder naming the
    /// calendar is re-planned.
    mutating func setCalendar(_ name: String, to calendar: ExclusionCalendar?, at now: Date) {
        triggers.calendars[name] = calendar
        for key in (triggers.calendarUsers[name] ?? []).sorted() { replan(key, at: now) }
    }

    /// The region crossings a report makes, in key order: for each region reminder of the
    /// recipient that the index finds near the point or that the recipient is inside, its
    /// presence before and after (with hysteresis) and the crossing, if any. On a recipient's
    /// first report every region reminder of it is determined, and none crosses.
    func crossings(of recipient: RecipientID, _ report: LocationReport)
        -> [(key: ReminderKey, presence: RegionPresence?, crossing: RegionCrossing?)]
    {
        guard let all = triggers.regionsOf[recipient] else { return [] }
        let isFirst = triggers.locations[recipient] == nil
        let inside = triggers.inside[recipient] ?? []
        let keys = isFirst ? all : Set(triggers.regions.candidates(near: report.point, in: recipient)).union(inside)
        var result: [(key: ReminderKey, presence: RegionPresence?, crossing: RegionCrossing?)] = []
        for key in keys.sorted() {
            guard let region = schedule.entries[key]?.reminder.trigger.region else { continue }
            let before: RegionPresence? = isFirst ? nil : (inside.contains(key) ? .inside : .outside)
            let after = region.presence(at: report.point, accuracy: report.accuracy, previous: before)
            result.append((key, after, RegionTrigger.crossing(from: before, to: after)))
        }
        return result
    }

    /// The fold of `.located`: the report becomes the recipient's last (a report not later
    /// than it changes nothing), region presences follow it and each crossing a pending,
    /// switched-on region reminder fires on makes a firing due at the report's instant (not
    /// after `now`): one per crossing, the same firing path as a clock occurrence (delivery
    /// plan, misfire threshold, badge, nags); a reminder that `triggersOnce` is then
    /// `delivered`. Sun reminders that follow the recipient's place are re-planned.
    mutating func applyLocated(_ recipient: RecipientID, _ report: LocationReport, at now: Date) -> [SharedFiring] {
        if let last = triggers.locations[recipient], report.at <= last.at { return [] }
        let crossings = crossings(of: recipient, report)
        triggers.locations[recipient] = report
        var inside = triggers.inside[recipient] ?? []
        var made: [SharedFiring] = []
        let dueAt = min(report.at, now.roundedToMillisecond)
        for (key, presence, crossing) in crossings {
            if presence == .inside { inside.insert(key) } else if presence == .outside { inside.remove(key) }
            guard let crossing, var entry = schedule.entries[key], entry.state == .pending else { continue }
            let reminder = entry.reminder
            guard reminder.enabled, let region = reminder.trigger.region, region.fires(on: crossing) else { continue }
            if let threshold = reminder.trigger.misfireThreshold, now.timeIntervalSince(dueAt) > threshold { continue }
            switch deliveryPlan(reminder.content, for: reminder.recipient) {
            case .suppressed:
                if region.triggersOnce { entry.state = .suppressed }
            case .deliver:
                let shared = SharedFiring(makeFiring(of: entry, reminder: reminder, dueAt: dueAt, late: false, missed: 0))
                if deliveries.unsettled[shared.firing.firingId] == nil {
                    deliveries.unsettled[shared.firing.firingId] = shared
                    made.append(shared)
                }
                if region.triggersOnce { entry.state = .delivered }
            }
            schedule.entries[key] = entry
        }
        triggers.inside[recipient] = inside.isEmpty ? nil : inside
        for key in (triggers.placeFollowers[recipient] ?? []).sorted() { replan(key, at: now) }
        return made
    }

    /// The presence a newly placed region reminder starts with: from its recipient's last
    /// location when there is one (no crossing), else undetermined until the next report.
    mutating func determineRegion(_ key: ReminderKey, _ region: RegionTrigger) {
        guard let last = triggers.locations[key.recipient] else { return }
        if region.presence(at: last.point, accuracy: 0, previous: nil) == .inside {
            triggers.inside[key.recipient, default: []].insert(key)
        }
    }
}
