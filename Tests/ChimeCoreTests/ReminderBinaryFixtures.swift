import ChimeTestSupport
import Foundation

@testable import ChimeCore

/// Hand-built reminders for the binary-form tests, covering every field and case (random ones
/// come from ChimeTestSupport's `RandomReminderMaker`).
enum ReminderBinaryFixtures {
    static let start = Date(timeIntervalSinceReferenceDate: 820_000_000.25)

    /// A one-shot: 15-byte id, 9-byte recipient, 100-byte body, instant start.
    static let oneShot = Reminder(
        id: "reminder-000001", recipient: "user-0001",
        content: Content(body: String(repeating: "a", count: 100)),
        trigger: Trigger(start: .instant(start)))

    /// Every property-list case, nested, with extreme numbers and non-ASCII text.
    static let everyUserInfoCase: [String: PropertyListValue] = [
        "string": .string("Grüße, 世界 👋🏽 e\u{301}"),
        "": .string(""),
        "min": .integer(.min),
        "max": .integer(.max),
        "zero": .integer(0),
        "negativeZero": .real(-0.0),
        "huge": .real(.greatestFiniteMagnitude),
        "tiny": .real(.leastNonzeroMagnitude),
        "infinity": .real(-.infinity),
        "true": .boolean(true),
        "false": .boolean(false),
        "array": .array([.integer(1), .array([]), .dictionary([:]), .string("x"), .array([.boolean(false)])]),
        "dictionary": .dictionary(["inner": .dictionary(["deepest": .real(1.5)]), "empty": .array([])]),
        "ключ": .integer(-1),
        // Neither equal nor ordered by String.< (Swift 6.3), so only byte order sorts them.
        "e\u{301}": .integer(2),
        "\u{E9} ": .integer(3),
    ]

    /// A rule with every part set, built field by field (not validated).
    static let everyRulePart = RecurrenceRule(
        frequency: .yearly, interval: 2, count: 10, until: .instant(Date(timeIntervalSinceReferenceDate: 1e9 + 0.5)),
        months: [1, 12], weekNumbers: [20, -1], daysOfTheYear: [1, -366], daysOfTheMonth: [-1, 15],
        weekdays: [.init(.monday), .init(.friday, ordinal: -1), .init(.sunday, ordinal: 53)], hours: [9, 17],
        minutes: [0, 30], seconds: [15], setPositions: [1, -1], weekStart: .sunday)

    /// Every field present, every optional set.
    static let everything = Reminder(
        id: "standup-ünïcödé", recipient: "team",
        content: Content(
            title: "Stand-up", body: "Room 4 🚪", action: "Join", launchImage: "launch.png", sound: "default",
            badgeChange: .set(-3), userInfo: everyUserInfoCase, category: "meeting", threadId: "daily"),
        trigger: Trigger(
            start: .wallClock(LocalDateTime(year: 2026, month: 12, day: 24, hour: 9), zoneIdentifier: "Europe/Berlin"),
            repeatRule: RepeatRule(unit: .week, interval: 2), recurrenceRule: everyRulePart,
            recurrenceDates: [
                .instant(Date(timeIntervalSinceReferenceDate: 8e8 + 0.000_1)),
                .local(LocalDateTime(year: 2027, month: 1, day: 2, hour: 3, minute: 4, second: 5)),
            ],
            exceptionDates: [.local(LocalDateTime(year: 2026, month: 12, day: 31, hour: 9))], monthEnd: .clamp,
            offset: 300, misfire: .fireAll, misfireThreshold: 3600),
        enabled: false, nag: NagPolicy(count: 3, interval: 600))

    /// One reminder per enum case and per edge value, each changing ``oneShot`` in one way.
    static let handBuilt: [Reminder] = {
        var reminders = [oneShot, everything]
        func variant(_ change: (inout Reminder) -> Void) {
            var reminder = oneShot
            change(&reminder)
            reminders.append(reminder)
        }
        variant { $0.content = Content() }
        variant {
            $0.content = Content(
                title: "", body: "", action: "", launchImage: "", sound: "", category: "", threadId: "")
        }
        variant { $0.content.userInfo = [:] }
        variant {
            $0.id = ""
            $0.recipient = ""
        }
        variant { $0.id = ReminderID(String(repeating: "é", count: 200)) }
        variant { $0.content.body = "\u{0}nul\u{0} \u{FEFF}bom \u{10FFFF}" }
        for badge in [BadgeChange.increment, .set(0), .set(1), .set(-1), .set(.max), .set(.min)] {
            variant { $0.content.badgeChange = badge }
        }
        for unit in RepeatUnit.allCases {
            variant { $0.trigger.repeatRule = RepeatRule(unit: unit, interval: 1) }
        }
        variant { $0.trigger.repeatRule = RepeatRule(unit: .day, interval: 0) }
        variant { $0.trigger.repeatRule = RepeatRule(unit: .day, interval: .min) }
        for frequency in RecurrenceRule.Frequency.allCases {
            variant { $0.trigger.recurrenceRule = RecurrenceRule(frequency: frequency) }
        }
        for weekday in Weekday.allCases {
            variant {
                $0.trigger.recurrenceRule = RecurrenceRule(
                    frequency: .weekly, weekdays: [.init(weekday), .init(weekday, ordinal: .max)], weekStart: weekday)
            }
        }
        variant {
            $0.trigger.recurrenceRule = RecurrenceRule(
                frequency: .daily, until: .local(LocalDateTime(year: 2026, month: 2, day: 30)))
        }
        variant { $0.trigger.recurrenceRule = RecurrenceRule(frequency: .daily, interval: 0, count: -5, hours: [99]) }
        for policy in MisfirePolicy.allCases {
            variant { $0.trigger.misfire = policy }
        }
        for seconds in [0.0, -0.0, 1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .infinity, -.infinity] {
            variant { $0.trigger.offset = seconds }
            variant { $0.trigger.misfireThreshold = seconds }
            variant { $0.trigger.start = .instant(Date(timeIntervalSinceReferenceDate: seconds)) }
        }
        variant {
            $0.trigger.start = .wallClock(
                LocalDateTime(year: -1, month: 13, day: 0, hour: 99, minute: -1, second: .max), zoneIdentifier: "")
        }
        variant {
            $0.trigger.start = .wallClock(
                LocalDateTime(year: 2026, month: 3, day: 29, hour: 2, minute: 30), zoneIdentifier: "recipient")
        }
        variant { $0.trigger.monthEnd = .clamp }
        variant { $0.enabled = false }
        variant { $0.nag = NagPolicy(count: .min, interval: -0.0) }
        return reminders
    }()
}
