import Foundation

/// What ``CalendarImporter`` needs besides the file.
public struct CalendarImportOptions: Sendable {
    /// Who every imported reminder is for.
    public var recipient: RecipientID
    /// The zone of floating times and dates when the calendar has no `X-WR-TIMEZONE`.
    public var defaultZone: String
    /// Seconds before its start at which an event without VALARM is reminded; `nil`
    /// imports nothing for such events.
    public var defaultAlarm: Double?
    /// Whether to ignore every VALARM and use only ``defaultAlarm`` (the differential
    /// test's view of plain event starts).
    public var ignoresCalendarAlarms: Bool
    /// Alarms that would fire before this instant (UTC) are not imported but counted in
    /// ``CalendarImportSummary/past`` (`chime import` passes now unless `--include-past`);
    /// `nil` imports them (a past one-shot then fires at once).
    public var skipsAlarmsBefore: Date?
    /// Whether acknowledged and snoozed alarms are honoured (RFC 9074, Thunderbird); off,
    /// every VALARM fires at its computed instants (the differential test's view).
    public var honoursAlarmState: Bool
    /// Maps a Windows zone name (`W. Europe Standard Time`, as Outlook writes TZIDs) to the
    /// IANA zone CLDR's windowsZones table gives it; `nil` (the default): Windows names are
    /// unknown, and the components using them are not importable. `chime import` passes ICU's
    /// table (`WindowsZoneNames.ianaIdentifier`, `ChimeRuntime`); a name it answers that is not
    /// a zone Chime accepts counts as unknown.
    public var windowsZoneNames: (@Sendable (String) -> String?)?

    /// Creates options.
    public init(
        recipient: RecipientID, defaultZone: String = "UTC", defaultAlarm: Double? = nil,
        ignoresCalendarAlarms: Bool = false, skipsAlarmsBefore: Date? = nil, honoursAlarmState: Bool = true,
        windowsZoneNames: (@Sendable (String) -> String?)? = nil
    ) {
        self.windowsZoneNames = windowsZoneNames
        self.honoursAlarmState = honoursAlarmState
        self.recipient = recipient
        self.defaultZone = defaultZone
        self.defaultAlarm = defaultAlarm
        self.ignoresCalendarAlarms = ignoresCalendarAlarms
        self.skipsAlarmsBefore = skipsAlarmsBefore
    }
}

/// What an import left out, counted (each alarm of each component once; a repeating
/// alarm is one).
public struct CalendarImportSummary: Codable, Hashable, Sendable {
    /// VEVENT and VTODO components read.
    public var components = 0
    /// Components without any VALARM (reminded only with a default alarm).
    public var withoutAlarms = 0
    /// Alarms whose every instant is before ``CalendarImportOptions/skipsAlarmsBefore``.
    public var past = 0
    /// Alarms acknowledged at or after their instant (RFC 9074 `ACKNOWLEDGED`, Thunderbird
    /// `X-MOZ-LASTACK`).
    public var acknowledged = 0
    /// Alarms replaced by a snooze (RFC 9074 `RELATED-TO;RELTYPE=SNOOZE`, Thunderbird
    /// `X-MOZ-SNOOZE-TIME`): the snooze fires instead.
    public var snoozed = 0

    /// An empty summary.
    public init() {}
}

/// A VEVENT or VTODO that was not imported, and why.
public struct SkippedComponent: Codable, Hashable, Sendable {
    /// Its UID (empty when it has none), cut to `maximumEchoedScalars` and `…`.
    public var uid: String
    /// Its SUMMARY, if any, cut to `maximumEchoedScalars` and `…`.
    public var summary: String?
    /// One sentence saying why, cut to `maximumReasonScalars` and `…`.
    public var reason: String
}

/// The outcome of reading a calendar: reminders to schedule and components left out.
public struct CalendarImport: Sendable {
    /// One reminder per (UID, RECURRENCE-ID or series, alarm), ids stable across imports.
    public var reminders: [Reminder]
    /// Components that could not be imported; the others still are.
    public var skipped: [SkippedComponent]
    /// Alarms and components left out on purpose, counted.
    public var summary = CalendarImportSummary()
    /// How zone names that are not IANA names were read (Windows names, VTIMEZONE rules).
    public var notes: [String] = []

    /// Creates an import result.
    public init(reminders: [Reminder], skipped: [SkippedComponent]) {
        self.reminders = reminders
        self.skipped = skipped
    }
}

/// Turns VEVENT and VTODO alarms of an iCalendar file (RFC 5545) into Chime reminders.
///
/// - Each VALARM becomes a reminder whose trigger is the component's start with its RRULE,
///   RDATEs and EXDATEs; an alarm before the start (`TRIGGER:-PT15M`, `RELATED=END` with a
///   longer event) is the remind-before offset `before`, one after the start moves the
///   start instead. An absolute TRIGGER is a one-shot. `REPEAT`+`DURATION` add one
///   reminder per repetition.
/// - Alarm state (RFC 9074): an alarm whose `ACKNOWLEDGED` (or the component's Thunderbird
///   `X-MOZ-LASTACK`) is at or after an instant does not fire then (§6.1: "greater than or
///   equal to the computed trigger time"); a snooze alarm (`RELATED-TO;RELTYPE=SNOOZE:<UID>`,
///   §7) fires at its own instant and replaces the instants of the alarm it names up to it,
///   as a Thunderbird `X-MOZ-SNOOZE-TIME[-<recurrence>]` does for every alarm of its
///   component. Occurrences of a repeating alarm left out this way become EXDATEs.
/// - Alarms whose every instant is before ``CalendarImportOptions/skipsAlarmsBefore`` are
///   left out and counted.
/// - A RECURRENCE-ID override replaces its occurrence (an EXDATE on the series plus its own
///   one-shot reminders); a cancelled one (`STATUS:CANCELLED`) only removes it.
/// - Reminder ids are `ics-` and 16 hex digits of a 64-bit FNV-1a hash of
///   `UID|RECURRENCE-ID|alarm`, so importing the same file again replaces the same reminders.
public enum CalendarImporter {
    /// Reads `text` and builds the reminders.
    /// - Throws: `ValidationError` `.invalidArgument` when the text is not iCalendar at all;
    ///   problems of single components are reported in ``CalendarImport/skipped``.
    public static func makeImport(_ text: String, options: CalendarImportOptions) throws(ValidationError) -> CalendarImport {
        let roots = try ICalendarParser.parse(text)
        var calendars = roots.filter { $0.name == "VCALENDAR" }
        if calendars.isEmpty { calendars = [ICalendarComponent(name: "VCALENDAR", components: roots)] }
        var result = CalendarImport(reminders: [], skipped: [])
        for calendar in calendars {
            let referenceYear = LocalDateTime(
                secondsSinceEpochAsIfUTC: Int((options.skipsAlarmsBefore ?? Date()).timeIntervalSince1970)).year
            let zones = ICalendarZones(
                calendar: calendar, defaultZone: options.defaultZone, referenceYear: referenceYear,
                windowsZoneNames: options.windowsZoneNames)
            result.notes += zones.notes
            let items = calendar.components.filter { $0.name == "VEVENT" || $0.name == "VTODO" }
            result.summary.components += items.count
            var order: [String] = []
            var byUID: [String: [ICalendarComponent]] = [:]
            for (index, item) in items.enumerated() {
                let uid = item.property("UID")?.text ?? "no-uid-\(index)"
                if byUID[uid] == nil { order.append(uid) }
                byUID[uid, default: []].append(item)
            }
            for uid in order {
                let builder = SeriesBuilder(uid: uid, zones: zones, options: options)
                builder.importGroup(byUID[uid] ?? [], into: &result)
            }
        }
        return result
    }
}

/// Imports the components sharing one UID: the series and its overrides.
struct SeriesBuilder {
    var uid: String
    var zones: ICalendarZones
    var options: CalendarImportOptions

    func importGroup(_ group: [ICalendarComponent], into result: inout CalendarImport) {
        var masters: [ICalendarComponent] = []
        var overrides: [Date: (key: String, component: ICalendarComponent)] = [:]
        for component in group {
            guard let recurrenceID = component.property("RECURRENCE-ID") else {
                masters.append(component)
                continue
            }
            do throws(ImportProblem) {
                guard let time = try zones.times(of: recurrenceID).first else { throw ImportProblem("empty RECURRENCE-ID") }
                if recurrenceID.parameter("RANGE")?.uppercased() == "THISANDFUTURE" {
                    throw ImportProblem("RECURRENCE-ID;RANGE=THISANDFUTURE is not supported")
                }
                let instant = time.instant
                if let existing = overrides[instant], Self.sequence(of: existing.component) > Self.sequence(of: component) {
                    continue
                }
                overrides[instant] = (RFC3339.format(instant), component)
            } catch {
                result.skipped.append(skip(component, error.reason))
            }
        }
        // Duplicated series (same UID, no RECURRENCE-ID): the highest SEQUENCE wins, then the last.
        if let master = masters.max(by: { Self.sequence(of: $0) <= Self.sequence(of: $1) }) {
            append(master, recurrenceKey: nil, excluded: Array(overrides.keys), into: &result)
        }
        for (_, override) in overrides.sorted(by: { $0.key < $1.key }) where !Self.isCancelled(override.component) {
            append(override.component, recurrenceKey: override.key, excluded: [], into: &result)
        }
    }

    private func append(
        _ component: ICalendarComponent, recurrenceKey: String?, excluded: [Date], into result: inout CalendarImport
    ) {
        if component.components(named: "VALARM").isEmpty { result.summary.withoutAlarms += 1 }
        do throws(ImportProblem) {
            if recurrenceKey == nil, Self.isCancelled(component) { throw ImportProblem("cancelled (STATUS:CANCELLED)") }
            let event = try EventTiming(component, zones: zones, isOverride: recurrenceKey != nil, excluded: excluded)
            var reminders: [Reminder] = []
            var summary = CalendarImportSummary()
            for alarm in try alarms(of: component) {
                let trigger = try event.trigger(for: alarm.timing)
                let reminder = Reminder(
                    id: Self.reminderID(uid: uid, recurrenceKey: recurrenceKey, alarm: alarm.label),
                    recipient: options.recipient,
                    content: Content(
                        title: component.property("SUMMARY")?.text, body: component.property("DESCRIPTION")?.text,
                        userInfo: ["icsUID": .string(uid)]),
                    trigger: trigger)
                do {
                    _ = try reminder.validate()
                } catch {
                    throw ImportProblem("\(error.field.map { "\($0): " } ?? "")\(error.message)")
                }
                if let kept = try AlarmState.apply(alarm.state, to: reminder, skippingBefore: options.skipsAlarmsBefore, summary: &summary) {
                    reminders.append(kept)
                }
            }
            result.reminders += reminders
            result.summary.past += summary.past
            result.summary.acknowledged += summary.acknowledged
            result.summary.snoozed += summary.snoozed
        } catch {
            result.skipped.append(skip(component, error.reason))
        }
    }

    /// The alarms of `component` with their state; the default alarm when it has none.
    private func alarms(of component: ICalendarComponent) throws(ImportProblem) -> [PlannedAlarm] {
        let valarms = options.ignoresCalendarAlarms ? [] : component.components(named: "VALARM")
        guard !valarms.isEmpty else {
            return options.defaultAlarm.map { [PlannedAlarm(label: "default", timing: .relative(seconds: -$0, toEnd: false))] } ?? []
        }
        let states = options.honoursAlarmState
            ? AlarmState.read(component, alarms: valarms, zones: zones)
            : [AlarmState](repeating: AlarmState(), count: valarms.count)
        var alarms: [PlannedAlarm] = []
        for (index, valarm) in valarms.enumerated() {
            let timings = try AlarmTiming.parse(valarm, zones: zones)
            for (repetition, timing) in timings.enumerated() {
                alarms.append(PlannedAlarm(
                    label: repetition == 0 ? "\(index)" : "\(index).\(repetition)", timing: timing, state: states[index]))
            }
        }
        for snooze in options.honoursAlarmState ? AlarmState.mozillaSnoozes(of: component, zones: zones) : [] {
            alarms.append(PlannedAlarm(label: snooze.label, timing: .absolute(snooze.instant), state: snooze.state))
        }
        return alarms
    }

    private func skip(_ component: ICalendarComponent, _ reason: String) -> SkippedComponent {
        SkippedComponent(echoingUID: component.property("UID")?.text ?? "", summary: component.property("SUMMARY")?.text, reason: reason)
    }

    static func reminderID(uid: String, recurrenceKey: String?, alarm: String) -> ReminderID {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(uid)|\(recurrenceKey ?? "")|\(alarm)".utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return ReminderID("ics-" + String(repeating: "0", count: 16 - hex.count) + hex)
    }

    static func sequence(of component: ICalendarComponent) -> Int {
        component.property("SEQUENCE").flatMap { Int($0.value.trimmingCharacters(in: .whitespaces)) } ?? 0
    }

    static func isCancelled(_ component: ICalendarComponent) -> Bool {
        component.property("STATUS")?.value.trimmingCharacters(in: .whitespaces).uppercased() == "CANCELLED"
    }
}
