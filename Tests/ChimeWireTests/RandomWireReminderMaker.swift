import ChimeCore
import ChimeTestSupport
import Foundation

/// Makes random reminders that JSON can carry (adapted from ChimeCoreTests'
/// `RandomReminderMaker`): each optional field present with probability ½, strings mixing
/// ASCII, characters JSON must escape and non-ASCII text, `userInfo` up to five levels deep,
/// finite doubles only (JSON has no infinities) including −0.0, subnormals and random bit
/// patterns, and a `misfireThreshold` ≥ 0 (decoding refuses a negative one).
struct RandomWireReminderMaker {
    var random: SeededRandomNumberGenerator

    private static let pieces = [
        "a", "Z", "0", " ", "-", "/", "\"", "\\", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "ß", "世", "👋🏽",
        "e\u{301}", "\u{2028}", "\u{FEFF}", "\u{10FFFF}",
    ]
    private static let rules = [
        "FREQ=DAILY", "FREQ=WEEKLY;BYDAY=MO,WE,FR", "FREQ=MONTHLY;BYDAY=-1FR;COUNT=12",
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "FREQ=MONTHLY;BYMONTHDAY=31;UNTIL=20271231T235959Z",
        "FREQ=HOURLY;INTERVAL=3;BYMINUTE=15", "FREQ=YEARLY;BYWEEKNO=1,-1;BYDAY=MO;WKST=SU",
        "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "FREQ=MINUTELY;INTERVAL=90;BYHOUR=9,10,11;BYSECOND=30",
        "FREQ=YEARLY;BYYEARDAY=1,100,-1;UNTIL=20300101",
    ]
    private static let zones = ["Europe/Berlin", "America/New_York", "UTC", "Asia/Kolkata", "Mars/Olympus"]

    init(seed: UInt64) { random = SeededRandomNumberGenerator(seed: seed) }

    mutating func coin() -> Bool { Bool.random(using: &random) }

    mutating func maybe<Value>(_ make: (inout RandomWireReminderMaker) -> Value) -> Value? {
        coin() ? make(&self) : nil
    }

    mutating func string(maximumPieces: Int = 12) -> String {
        let count = Int.random(in: 0...maximumPieces, using: &random)
        return (0..<count).map { _ in Self.pieces.randomElement(using: &random) ?? "" }.joined()
    }

    mutating func double() -> Double {
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            let specials: [Double] = [
                0, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1, 1.5, 1e16, 0x1p63, -0x1p63,
            ]
            return specials[Int.random(in: 0..<specials.count, using: &random)]
        case 1: return Double(Int.random(in: 0...100_000, using: &random))
        case 2: return Double(Int.random(in: -100_000...100_000, using: &random)) / 8
        default:
            let value = Double(bitPattern: random.next())
            return value.isFinite ? value : 1.5
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
        let milliseconds = Int64.random(in: -30_000_000_000_000...30_000_000_000_000, using: &random)
        return Date(timeIntervalSinceReferenceDate: coin() ? Double(milliseconds) / 1000 : double())
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
        let start: TriggerStart =
            coin() ? .instant(instant()) : .wallClock(local(), zoneIdentifier: Self.zones.randomElement(using: &random) ?? "")
        let trigger = Trigger(
            start: start,
            repeatRule: maybe {
                RepeatRule(
                    unit: RepeatUnit.allCases.randomElement(using: &$0.random) ?? .day,
                    interval: $0.coin() ? 1 : Int.random(in: -5...500, using: &$0.random))
            },
            recurrenceRule: maybe {
                try? RecurrenceRule(parsing: Self.rules.randomElement(using: &$0.random) ?? "FREQ=DAILY")
            } ?? nil,
            recurrenceDates: (0..<(coin() ? 0 : Int.random(in: 1...4, using: &random))).map { _ in dateTime() },
            exceptionDates: (0..<(coin() ? 0 : Int.random(in: 1...4, using: &random))).map { _ in dateTime() },
            monthEnd: coin() ? .skip : .clamp,
            offset: maybe { $0.coin() ? Double(Int.random(in: 0...86_400, using: &$0.random)) : $0.double() },
            misfire: maybe { MisfirePolicy.allCases.randomElement(using: &$0.random) ?? .skip },
            misfireThreshold: maybe { $0.double().magnitude })
        return Reminder(
            id: ReminderID(coin() ? "reminder-\(random.next() % 1_000_000)" : string()),
            recipient: RecipientID(string()), content: content, trigger: trigger, enabled: coin(),
            nag: maybe { NagPolicy(count: Int.random(in: 1...100, using: &$0.random), interval: $0.double()) })
    }
}
