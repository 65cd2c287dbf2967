import Foundation

/// A repeat in another calendar scale (RFC 7529 `RSCALE`), for its common cases: a yearly or
/// monthly rule on one month-day of the Chinese, Hebrew, Islamic (Umm al-Qura or civil),
/// Persian or Indian calendar, through the calendars Foundation ships (ICU's).
///
/// Text: `RSCALE=HEBREW;FREQ=YEARLY;BYMONTH=5L;BYMONTHDAY=14;SKIP=FORWARD` (parts in any
/// order): `RSCALE` `CHINESE`, `HEBREW`, `ISLAMIC-UMALQURA`, `ISLAMIC-CIVIL`, `PERSIAN`,
/// `INDIAN`; `FREQ` `YEARLY` or `MONTHLY`; `INTERVAL`; `COUNT` or `UNTIL` (an instant,
/// `…Z`); `BYMONTH` one month, `L` for a leap month (RFC 7529 numbering: Hebrew 1 Tishri …
/// 12 Elul, `5L` Adar I; Chinese leap months `4L`); `BYMONTHDAY` one day (1–30); `SKIP`
/// `OMIT` (default), `BACKWARD` or `FORWARD` for a day or leap month a year or month lacks
/// (§3.1: backward the last day of the month, or the month before the leap month's place;
/// forward the first day of the next month). Without `BYMONTH`/`BYMONTHDAY` the start's
/// month and day in that scale are kept. The time of day is the start's, in its zone.
public struct ScaledRule: Hashable, Sendable, CustomStringConvertible {
    /// The calendar scales supported, by RFC 7529 name.
    public enum Scale: String, CaseIterable, Sendable {
        case chinese = "CHINESE", hebrew = "HEBREW", islamicUmmAlQura = "ISLAMIC-UMALQURA"
        case islamicCivil = "ISLAMIC-CIVIL", persian = "PERSIAN", indian = "INDIAN"

        var identifier: Calendar.Identifier {
            switch self {
            case .chinese: .chinese
            case .hebrew: .hebrew
            case .islamicUmmAlQura: .islamicUmmAlQura
            case .islamicCivil: .islamicCivil
            case .persian: .persian
            case .indian: .indian
            }
        }
    }

    /// What a missing day or leap month becomes.
    public enum Skip: String, Sendable { case omit = "OMIT", backward = "BACKWARD", forward = "FORWARD" }

    public var scale: Scale
    /// Yearly (`true`) or monthly.
    public var isYearly: Bool
    public var interval: Int
    public var count: Int?
    public var until: Date?
    /// RFC 7529 month number and whether it is the leap month.
    public var month: (number: Int, isLeap: Bool)?
    public var day: Int?
    public var skip: Skip

    public static func == (lhs: ScaledRule, rhs: ScaledRule) -> Bool { lhs.description == rhs.description }
    public func hash(into hasher: inout Hasher) { hasher.combine(description) }

    /// Parses the rule text.
    /// - Throws: `ValidationError` `.invalidArgument` (field `trigger.rrule`) naming the part.
    public init(parsing text: String) throws(ValidationError) {
        func invalid(_ reason: String) -> ValidationError { ValidationError(.invalidArgument, field: "trigger.rrule", reason) }
        var scale: Scale?
        var isYearly: Bool?
        var interval = 1
        var count: Int?
        var until: Date?
        var month: (Int, Bool)?
        var day: Int?
        var skip = Skip.omit
        var body = text.uppercased()
        if body.hasPrefix("RRULE:") { body.removeFirst(6) }
        for part in body.split(separator: ";") {
            let pieces = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pieces.count == 2 else { throw invalid("'\(part)' is not NAME=VALUE") }
            let (name, value) = (pieces[0], pieces[1])
            switch name {
            case "RSCALE":
                guard let found = Scale(rawValue: value) else {
                    throw invalid("RSCALE=\(value) is not supported; use \(Scale.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                scale = found
            case "FREQ":
                guard value == "YEARLY" || value == "MONTHLY" else { throw invalid("with RSCALE, FREQ is YEARLY or MONTHLY") }
                isYearly = value == "YEARLY"
            case "INTERVAL":
                guard let number = Int(value), (1...1000).contains(number) else { throw invalid("INTERVAL must be 1 to 1000") }
                interval = number
            case "COUNT":
                guard let number = Int(value), (1...100_000).contains(number) else { throw invalid("COUNT must be 1 to 100000") }
                count = number
            case "UNTIL":
                guard value.hasSuffix("Z"), value.count == 16,
                    let parsed = try? RFC3339.parseInstant(
                        "\(value.prefix(4))-\(value.dropFirst(4).prefix(2))-\(value.dropFirst(6).prefix(2))T\(value.dropFirst(9).prefix(2)):\(value.dropFirst(11).prefix(2)):\(value.dropFirst(13).prefix(2))Z")
                else { throw invalid("with RSCALE, UNTIL is a UTC date-time such as 20301231T235959Z") }
                until = parsed
            case "BYMONTH":
                let isLeap = value.hasSuffix("L")
                guard let number = Int(isLeap ? String(value.dropLast()) : value), (1...13).contains(number) else {
                    throw invalid("with RSCALE, BYMONTH is one month such as 5 or 5L")
                }
                month = (number, isLeap)
            case "BYMONTHDAY":
                guard let number = Int(value), (1...30).contains(number) else { throw invalid("with RSCALE, BYMONTHDAY is one day 1 to 30") }
                day = number
            case "SKIP":
                guard let found = Skip(rawValue: value) else { throw invalid("SKIP is OMIT, BACKWARD or FORWARD") }
                skip = found
            default:
                if name.hasPrefix("X-") { continue }
                throw invalid("with RSCALE, Chime takes FREQ, INTERVAL, COUNT, UNTIL, BYMONTH (one), BYMONTHDAY (one) and SKIP, not \(name)")
            }
        }
        guard let scale else { throw invalid("no RSCALE") }
        guard let isYearly else { throw invalid("FREQ is required") }
        if count != nil && until != nil { throw invalid("give COUNT or UNTIL, not both (RFC 5545 §3.3.10)") }
        if month != nil && !isYearly { throw invalid("BYMONTH needs FREQ=YEARLY") }
        self.scale = scale
        self.isYearly = isYearly
        self.interval = interval
        self.count = count
        self.until = until
        self.month = month
        self.day = day
        self.skip = skip
    }

    /// The canonical text.
    public var description: String {
        var parts = ["RSCALE=\(scale.rawValue)", "FREQ=\(isYearly ? "YEARLY" : "MONTHLY")"]
        if interval != 1 { parts.append("INTERVAL=\(interval)") }
        if let count { parts.append("COUNT=\(count)") }
        if let until {
            let text = RFC3339.format(until)
            parts.append("UNTIL=" + text.prefix(19).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "") + "Z")
        }
        if let month { parts.append("BYMONTH=\(month.number)\(month.isLeap ? "L" : "")") }
        if let day { parts.append("BYMONTHDAY=\(day)") }
        if skip != .omit { parts.append("SKIP=\(skip.rawValue)") }
        return parts.joined(separator: ";")
    }

    /// Whether rule text is an RSCALE rule (then ``init(parsing:)`` reads it, not `RecurrenceRule`).
    public static func isScaled(_ text: String) -> Bool { text.uppercased().contains("RSCALE=") }
}

/// The occurrences of a ``ScaledRule`` from a wall-clock start: period `k` is the start's
/// year (or month) in the scale plus `k × INTERVAL`, on the rule's month-day, at the start's
/// time of day in its zone.
struct ScaledSeries: OccurrenceSource {
    let rule: ScaledRule
    let calendar: Calendar
    let zone: TimeZone
    let base: Date
    let timeOfDay: (hour: Int, minute: Int, second: Int)
    let firstInstant: Date
    /// The start's month (ICU numbering, leap flag) and day in the scale.
    let startMonth: (Int, Bool)
    let startDay: Int

    init(rule: ScaledRule, local: LocalDateTime, zone: TimeZone) {
        var calendar = Calendar(identifier: rule.scale.identifier)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? zone
        self.rule = rule
        self.calendar = calendar
        self.zone = zone
        base = Date(timeIntervalSince1970: Double(LocalDateTime(year: local.year, month: local.month, day: local.day, hour: 12).secondsSinceEpochAsIfUTC))
        timeOfDay = (local.hour, local.minute, local.second)
        firstInstant = ZoneRules.resolve(local, in: zone)
        let parts = calendar.dateComponents([.month, .day, .isLeapMonth], from: base)
        startMonth = (parts.month ?? 1, parts.isLeapMonth ?? false)
        startDay = parts.day ?? 1
    }

    /// The ICU month of an RFC 7529 month in this scale.
    func icuMonth(_ number: Int, isLeap: Bool) -> (Int, Bool) {
        guard rule.scale == .hebrew else { return (number, isLeap) }
        if isLeap { return (6, false) }
        return (number <= 5 ? number : number + 1, false)
    }

    /// The instant of period `k`, or `nil` (a hole, or past COUNT/UNTIL).
    func instant(ofPeriod k: Int) -> Date? {
        guard k >= 0 else { return nil }
        if let count = rule.count, k >= count { return nil }
        guard let anchor = calendar.date(byAdding: rule.isYearly ? .year : .month, value: k * rule.interval, to: base) else { return nil }
        var wanted = calendar.dateComponents([.era, .year, .month, .isLeapMonth], from: anchor)
        let month = rule.month.map { icuMonth($0.number, isLeap: $0.isLeap) } ?? (rule.isYearly ? startMonth : (wanted.month ?? 1, wanted.isLeapMonth ?? false))
        wanted.month = month.0
        wanted.isLeapMonth = month.1
        wanted.day = rule.day ?? startDay
        var date = calendar.date(from: wanted)
        if let found = date {
            let back = calendar.dateComponents([.month, .day, .isLeapMonth], from: found)
            let exact = back.month == month.0 && back.day == wanted.day && (back.isLeapMonth ?? false) == month.1
            if !exact {
                switch rule.skip {
                case .omit: date = nil
                case .forward:
                    // The day after the month's last: what ICU's normalisation already gives
                    // for a missing day; for a missing leap month, the next month's day 1.
                    var next = wanted
                    next.isLeapMonth = false
                    next.day = 1
                    if back.month == month.0 { next.month = month.0 + 1 }
                    date = calendar.date(from: next)
                case .backward:
                    var last = wanted
                    last.isLeapMonth = false
                    if month.1 || (rule.scale == .hebrew && month.0 == 6) {
                        // A missing leap month: the month before its place.
                        last.month = rule.scale == .hebrew ? 5 : month.0
                    } else {
                        last.day = 1
                        if let first = calendar.date(from: last), let range = calendar.range(of: .day, in: .month, for: first) {
                            last.day = range.upperBound - 1
                        }
                    }
                    date = calendar.date(from: last)
                }
            }
        }
        guard let date else { return nil }
        let gregorian = ZoneRules.localDateTime(at: date, in: TimeZone(secondsFromGMT: 0) ?? zone)
        let local = LocalDateTime(
            year: gregorian.year, month: gregorian.month, day: gregorian.day, hour: timeOfDay.hour, minute: timeOfDay.minute,
            second: timeOfDay.second)
        let instant = ZoneRules.resolve(local, in: zone)
        if let until = rule.until, instant > until { return nil }
        return instant
    }

    var periodSeconds: Double { (rule.isYearly ? 365.25 : 29.53) * 86_400 * Double(rule.interval) }

    func first(from instant: Date, inclusive: Bool) -> (step: Int, instant: Date)? {
        var k = max(0, Int((instant.timeIntervalSince(firstInstant) / periodSeconds).rounded(.down)) - 2)
        let last = rule.count.map { $0 - 1 } ?? Int.max
        var holes = 0
        while k <= last, holes < 1000 {
            if let candidate = self.instant(ofPeriod: k) {
                if inclusive ? candidate >= instant : candidate > instant { return (k, candidate) }
                if let until = rule.until, candidate > until { return nil }
            } else {
                holes += 1
                if let until = rule.until, firstInstant.addingTimeInterval(Double(k) * periodSeconds) > until.addingTimeInterval(periodSeconds) { return nil }
            }
            k += 1
        }
        return nil
    }

    func lowerBound(ofIndex index: Int) -> Date? {
        firstInstant.addingTimeInterval((Double(index) - 1.5) * periodSeconds)
    }

    func probe(ofIndex index: Int) -> Date? { instant(ofPeriod: index) ?? lowerBound(ofIndex: index) }
}

extension Recurrence {
    /// The occurrences of an RSCALE rule from `start` (a wall-clock start in a zone, or an
    /// instant read as UTC).
    /// - Throws: `ValidationError` `.unknownTimeZone` for the start's zone.
    public static func scaled(_ rule: ScaledRule, start: TriggerStart) throws(ValidationError) -> Recurrence {
        let local: LocalDateTime
        let zone: TimeZone
        switch start {
        case .instant(let date):
            zone = TimeZone(secondsFromGMT: 0) ?? .current
            local = ZoneRules.localDateTime(at: date, in: zone)
        case .wallClock(let wall, let zoneName):
            zone = try ZoneRules.zone(named: zoneName)
            local = wall
        }
        let series = ScaledSeries(rule: rule, local: local, zone: zone)
        return Recurrence(source: series, start: start, firstInstant: series.firstInstant)
    }
}
