import ChimeTestSupport
import Foundation

@testable import ChimeCore

/// Reminders for the binary-form tests: hand-built ones that cover every field and case,
/// and a seeded generator of random ones.
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

/// Makes random reminders: each optional field present with probability ½, strings of
/// mixed ASCII and non-ASCII text, `userInfo` up to five levels deep, and doubles that
/// include −0.0, infinities, subnormals and random bit patterns (never NaN, which is
/// unequal to itself).
struct RandomReminderMaker {
    var random: SeededRandomNumberGenerator

    private static let pieces = ["a", "Z", "0", " ", "-", "é", "ß", "世", "👋🏽", "e\u{301}", "\u{0}", "\u{10FFFF}"]
    private static let rules = [
        "FREQ=DAILY", "FREQ=WEEKLY;BYDAY=MO,WE,FR", "FREQ=MONTHLY;BYDAY=-1FR;COUNT=12",
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "FREQ=MONTHLY;BYMONTHDAY=31;UNTIL=20271231T235959Z",
        "FREQ=HOURLY;INTERVAL=3;BYMINUTE=15", "FREQ=YEARLY;BYWEEKNO=1,-1;BYDAY=MO;WKST=SU",
        "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "FREQ=MINUTELY;INTERVAL=90;BYHOUR=9,10,11;BYSECOND=30",
        "FREQ=YEARLY;BYYEARDAY=1,100,-1;UNTIL=20300101",
    ]

    init(seed: UInt64) { random = SeededRandomNumberGenerator(seed: seed) }

    mutating func coin() -> Bool { Bool.random(using: &random) }

    mutating func maybe<Value>(_ make: (inout RandomReminderMaker) -> Value) -> Value? {
        coin() ? make(&self) : nil
    }

    mutating func string(maximumPieces: Int = 12) -> String {
        let count = Int.random(in: 0...maximumPieces, using: &random)
        return (0..<count).map { _ in Self.pieces.randomElement(using: &random) ?? "" }.joined()
    }

    mutating func double() -> Double {
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            return [0.0, -0.0, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude][
                Int.random(in: 0..<6, using: &random)]
        case 1: return Double(Int.random(in: 0...100_000, using: &random))
        default:
            let value = Double(bitPattern: random.next())
            return value.isNaN ? 1.5 : value
        }
    }

    mutating func integer() -> Int64 {
        coin() ? Int64.random(in: -1000...1000, using: &random) : Int64(bitPattern: random.next())
    }

    mutating func local() -> LocalDateTime {
        LocalDateTime(
            year: Int.random(in: 0...9999, using: &random), month: Int.random(in: 1...12, using: &random),
            day: Int.random(in: 1...28, using: &random), hour: Int.random(in: 0...23, using: &random),
            minute: Int.random(in: 0...59, using: &random), second: Int.random(in: 0...59, using: &random))
    }

    mutating func instant() -> Date {
        Date(timeIntervalSinceReferenceDate: coin() ? Double.random(in: -3e10...3e10, using: &random) : double())
    }

    mutating func dateTime() -> RecurrenceDateTime {
        coin() ? .instant(instant()) : .local(local())
    }

    mutating func value(level: Int) -> PropertyListValue {
        let kinds = level >= 5 ? 4 : 6
        switch Int.random(in: 0..<kinds, using: &random) {
        case 0: return .string(string())
        case 1: return .integer(integer())
        case 2: return .real(double())
        case 3: return .boolean(coin())
        case 4: return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in value(level: level + 1) })
        default: return .dictionary(dictionary(level: level + 1))
        }
    }

    mutating func dictionary(level: Int) -> [String: PropertyListValue] {
        var entries: [String: PropertyListValue] = [:]
        for _ in 0..<Int.random(in: 0...5, using: &random) {
            entries[string(maximumPieces: 4)] = value(level: level + 1)
        }
        return entries
    }

    mutating func reminder() -> Reminder {
        let content = Content(
            title: maybe { $0.string() }, body: maybe { $0.string(maximumPieces: 60) }, action: maybe { $0.string() },
            launchImage: maybe { $0.string() }, sound: maybe { $0.string() },
            badgeChange: maybe { $0.coin() ? .increment : .set(Int(truncatingIfNeeded: $0.integer())) },
            userInfo: maybe { $0.dictionary(level: 1) }, category: maybe { $0.string() },
            threadId: maybe { $0.string() })
        let start: TriggerStart = coin() ? .instant(instant()) : .wallClock(local(), zoneIdentifier: string())
        let trigger = Trigger(
            start: start,
            repeatRule: maybe {
                RepeatRule(
                    unit: RepeatUnit.allCases.randomElement(using: &$0.random) ?? .day,
                    interval: Int.random(in: 1...500, using: &$0.random))
            },
            recurrenceRule: maybe {
                try? RecurrenceRule(parsing: Self.rules.randomElement(using: &$0.random) ?? "FREQ=DAILY")
            } ?? nil,
            recurrenceDates: (0..<(coin() ? 0 : Int.random(in: 1...4, using: &random))).map { _ in dateTime() },
            exceptionDates: (0..<(coin() ? 0 : Int.random(in: 1...4, using: &random))).map { _ in dateTime() },
            monthEnd: coin() ? .skip : .clamp, offset: maybe { $0.double() },
            misfire: maybe { MisfirePolicy.allCases.randomElement(using: &$0.random) ?? .skip },
            misfireThreshold: maybe { $0.double() })
        return Reminder(
            id: ReminderID(string()), recipient: RecipientID(string()), content: content, trigger: trigger,
            enabled: coin(),
            nag: maybe { NagPolicy(count: Int.random(in: 1...100, using: &$0.random), interval: $0.double()) })
    }
}
