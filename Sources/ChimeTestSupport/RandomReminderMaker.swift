import ChimeCore
import Foundation

/// Makes random reminders from a seed, the same ones for the same seed and mode.
///
/// Each optional field is present with probability ½, strings mix ASCII and non-ASCII
/// text, and `userInfo` nests up to five levels deep. Doubles include −0.0, subnormals and
/// random bit patterns, never NaN (which is unequal to itself).
///
/// By default any value the binary form can carry may appear: infinities, arbitrary
/// instants, arbitrary zone identifiers, negative thresholds. With `jsonSafe` only values
/// JSON can carry appear: finite doubles, instants at whole milliseconds, zone identifiers
/// from a short list (one of them unknown), a `misfireThreshold` ≥ 0 (decoding refuses a
/// negative one), and strings that also hold characters JSON must escape.
///
/// With `attention` the content also draws the attention fields (subtitle, interruption
/// level, relevance score, target, filter criteria, `hasAction`, `unhandled`, collapse key)
/// after everything else; without
/// it the sequences are those made before the fields existed.
///
/// Changing the order of random draws in either mode changes every reminder after it, and
/// tests assert exact counts over these sequences.
public struct RandomReminderMaker {
    private var random: SeededRandomNumberGenerator
    private let jsonSafe: Bool
    private let attention: Bool

    private static let pieces = ["a", "Z", "0", " ", "-", "é", "ß", "世", "👋🏽", "e\u{301}", "\u{0}", "\u{10FFFF}"]
    private static let jsonPieces = [
        "a", "Z", "0", " ", "-", "/", "\"", "\\", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "ß", "世", "👋🏽",
        "e\u{301}", "\u{2028}", "\u{FEFF}", "\u{10FFFF}",
    ]
    private static let specialDoubles: [Double] = [
        0.0, -0.0, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
    ]
    private static let finiteSpecialDoubles: [Double] = [
        0, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1, 1.5, 1e16, 0x1p63, -0x1p63,
    ]
    private static let rules = [
        "FREQ=DAILY", "FREQ=WEEKLY;BYDAY=MO,WE,FR", "FREQ=MONTHLY;BYDAY=-1FR;COUNT=12",
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "FREQ=MONTHLY;BYMONTHDAY=31;UNTIL=20271231T235959Z",
        "FREQ=HOURLY;INTERVAL=3;BYMINUTE=15", "FREQ=YEARLY;BYWEEKNO=1,-1;BYDAY=MO;WKST=SU",
        "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "FREQ=MINUTELY;INTERVAL=90;BYHOUR=9,10,11;BYSECOND=30",
        "FREQ=YEARLY;BYYEARDAY=1,100,-1;UNTIL=20300101",
    ]
    private static let zones = ["Europe/Berlin", "America/New_York", "UTC", "Asia/Kolkata", "Mars/Olympus"]

    /// A maker whose sequence of reminders is fixed by `seed` and `jsonSafe`.
    ///
    /// - Parameters:
    ///   - seed: The seed of the underlying ``SeededRandomNumberGenerator``.
    ///   - jsonSafe: Whether every reminder must survive a trip through JSON.
    ///   - attention: Whether content draws the attention fields too.
    public init(seed: UInt64, jsonSafe: Bool = false, attention: Bool = false) {
        random = SeededRandomNumberGenerator(seed: seed)
        self.jsonSafe = jsonSafe
        self.attention = attention
    }

    /// The next random reminder.
    public mutating func reminder() -> Reminder {
        var content = Content(
            title: maybe { $0.string() }, body: maybe { $0.string(maximumPieces: 60) }, action: maybe { $0.string() },
            launchImage: maybe { $0.string() }, sound: maybe { $0.string() },
            badgeChange: maybe { $0.coin() ? .increment : .set(Int(truncatingIfNeeded: $0.integer())) },
            userInfo: maybe { $0.dictionary(level: 1) }, category: maybe { $0.string() },
            threadId: maybe { $0.string() })
        if attention { drawAttentionFields(into: &content) }
        let start: TriggerStart = coin() ? .instant(instant()) : .wallClock(local(), zoneIdentifier: zoneIdentifier())
        let trigger = Trigger(
            start: start,
            repeatRule: maybe {
                RepeatRule(unit: RepeatUnit.allCases.randomElement(using: &$0.random) ?? .day, interval: $0.interval())
            },
            recurrenceRule: maybe {
                try? RecurrenceRule(parsing: Self.rules.randomElement(using: &$0.random) ?? "FREQ=DAILY")
            } ?? nil,
            recurrenceDates: (0..<(coin() ? 0 : Int.random(in: 1...4, using: &random))).map { _ in dateTime() },
            exceptionDates: (0..<(coin() ? 0 : Int.random(in: 1...4, using: &random))).map { _ in dateTime() },
            monthEnd: coin() ? .skip : .clamp, offset: maybe { $0.offset() },
            misfire: maybe { MisfirePolicy.allCases.randomElement(using: &$0.random) ?? .skip },
            misfireThreshold: maybe { $0.jsonSafe ? $0.double().magnitude : $0.double() })
        let id = jsonSafe && coin() ? "reminder-\(random.next() % 1_000_000)" : string()
        return Reminder(
            id: ReminderID(id), recipient: RecipientID(string()), content: content, trigger: trigger,
            enabled: coin(),
            nag: maybe { NagPolicy(count: Int.random(in: 1...100, using: &$0.random), interval: $0.double()) })
    }

    private mutating func drawAttentionFields(into content: inout Content) {
        content.subtitle = maybe { $0.string() }
        content.interruptionLevel = InterruptionLevel.allCases.randomElement(using: &random) ?? .active
        // In 0...1, as validation wants, at whole 1/1024ths so JSON keeps them exactly.
        content.relevanceScore = maybe { Double(Int.random(in: 0...1024, using: &$0.random)) / 1024 }
        content.targetContentIdentifier = maybe { $0.string() }
        content.filterCriteria = maybe { $0.string() }
        content.hasAction = coin()
        content.unhandled = UnhandledPolicy.allCases.randomElement(using: &random) ?? .stack
        content.collapseKey = maybe { $0.string() }
        // The later fields, valid as scheduling wants them (arguments only with their key, a
        // volume only with a sound), sizes within each kind's limit.
        content.attachments = maybe { maker in
            (0..<Int.random(in: 0...2, using: &maker.random)).map { index in
                NotificationAttachment(
                    identifier: "a\(index)", url: "https://example.com/\(maker.random.next() % 1000).png", type: "image/png",
                    size: Int.random(in: 1...(10 << 20), using: &maker.random))
            }
        }
        content.titleKey = maybe { "KEY_\($0.random.next() % 1000)" }
        if content.titleKey != nil { content.titleArgs = maybe { maker in [maker.string(maximumPieces: 3)] } }
        content.bodyKey = maybe { "KEY_\($0.random.next() % 1000)" }
        if content.bodyKey != nil { content.bodyArgs = maybe { maker in [maker.string(maximumPieces: 3), maker.string(maximumPieces: 3)] } }
        if content.sound != nil { content.soundVolume = maybe { Double(Int.random(in: 0...1024, using: &$0.random)) / 1024 } }
        content.throttled = ThrottledPolicy.allCases.randomElement(using: &random) ?? .hold
    }

    private mutating func coin() -> Bool { Bool.random(using: &random) }

    private mutating func maybe<Value>(_ make: (inout RandomReminderMaker) -> Value) -> Value? {
        coin() ? make(&self) : nil
    }

    private mutating func string(maximumPieces: Int = 12) -> String {
        let pieces = jsonSafe ? Self.jsonPieces : Self.pieces
        let count = Int.random(in: 0...maximumPieces, using: &random)
        return (0..<count).map { _ in pieces.randomElement(using: &random) ?? "" }.joined()
    }

    private mutating func double() -> Double {
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            let specials = jsonSafe ? Self.finiteSpecialDoubles : Self.specialDoubles
            return specials[Int.random(in: 0..<specials.count, using: &random)]
        case 1: return Double(Int.random(in: 0...100_000, using: &random))
        case 2 where jsonSafe: return Double(Int.random(in: -100_000...100_000, using: &random)) / 8
        default:
            let value = Double(bitPattern: random.next())
            if jsonSafe { return value.isFinite ? value : 1.5 }
            return value.isNaN ? 1.5 : value
        }
    }

    private mutating func integer() -> Int64 {
        coin() ? Int64.random(in: -1000...1000, using: &random) : Int64(bitPattern: random.next())
    }

    private mutating func local() -> LocalDateTime {
        LocalDateTime(
            year: Int.random(in: 1...9999, using: &random), month: Int.random(in: 1...12, using: &random),
            day: Int.random(in: 1...28, using: &random), hour: Int.random(in: 0...23, using: &random),
            minute: Int.random(in: 0...59, using: &random), second: Int.random(in: 0...59, using: &random))
    }

    private mutating func instant() -> Date {
        if jsonSafe {
            let milliseconds = Int64.random(in: -30_000_000_000_000...30_000_000_000_000, using: &random)
            let date = Date(timeIntervalSinceReferenceDate: coin() ? Double(milliseconds) / 1000 : double())
            // JSON carries years 0001–9999 only; the reference date stands in for the rest.
            return RFC3339.isSupported(date) ? date : Date(timeIntervalSinceReferenceDate: 0)
        }
        return Date(timeIntervalSinceReferenceDate: coin() ? Double.random(in: -3e10...3e10, using: &random) : double())
    }

    private mutating func dateTime() -> RecurrenceDateTime {
        coin() ? .instant(instant()) : .local(local())
    }

    private mutating func zoneIdentifier() -> String {
        jsonSafe ? Self.zones.randomElement(using: &random) ?? "" : string()
    }

    private mutating func interval() -> Int {
        guard jsonSafe else { return Int.random(in: 1...500, using: &random) }
        return coin() ? 1 : Int.random(in: -5...500, using: &random)
    }

    private mutating func offset() -> Double {
        jsonSafe && coin() ? Double(Int.random(in: 0...86_400, using: &random)) : double()
    }

    private mutating func value(level: Int) -> PropertyListValue {
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

    private mutating func dictionary(level: Int) -> [String: PropertyListValue] {
        var entries: [String: PropertyListValue] = [:]
        for _ in 0..<Int.random(in: 0...5, using: &random) {
            entries[string(maximumPieces: 4)] = value(level: level + 1)
        }
        return entries
    }
}
