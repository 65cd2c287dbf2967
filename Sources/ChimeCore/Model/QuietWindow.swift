import Foundation

/// One window of a recipient's quiet hours (Apple's Focus, Braze's and Pinpoint's quiet
/// time): from `start` to `end` on the recipient's wall clock, starting on `weekdays`.
///
/// JSON shape: `{"start": "22:00", "end": "07:00", "weekdays": ["MO", "TU"]}`; `weekdays`
/// (RFC 5545 codes) absent or empty means every day. An `end` at or before `start` ends on
/// the next day (`22:00`–`07:00` is a night); `start` and `end` may not be equal. Passive
/// and active firings due inside a window are held and delivered at its end (see
/// ``release(of:windows:in:)``).
public struct QuietWindow: Hashable, Sendable {
    /// When the window starts, in minutes after local midnight, 0–1439.
    public var start: Int
    /// When the window ends, in minutes after local midnight, 0–1439; at or before `start`:
    /// on the next day.
    public var end: Int
    /// The days on which the window starts; empty: every day.
    public var weekdays: Set<Weekday>

    /// Creates a window from minutes after local midnight (see the properties); not checked,
    /// see ``validate(field:)``.
    public init(start: Int, end: Int, weekdays: Set<Weekday> = []) {
        self.start = start
        self.end = end
        self.weekdays = weekdays
    }

    /// The most windows a recipient may have.
    public static let maximumCount = 32

    /// Checks the minutes are in range and the window is not empty.
    /// - Throws: `ValidationError` `.invalidArgument` naming `field`.
    public func validate(field: String) throws(ValidationError) {
        guard (0..<1440).contains(start), (0..<1440).contains(end) else {
            throw ValidationError(.invalidArgument, field: field, "start and end must be times of day, 00:00 to 23:59")
        }
        guard start != end else {
            throw ValidationError(.invalidArgument, field: field, "starts and ends at \(Self.text(ofMinutes: start)); a window needs a length")
        }
    }

    /// Parses the command line's form: `HH:MM-HH:MM`, optionally after weekday codes and a
    /// space (`MO,TU,WE,TH,FR 22:00-07:00`; codes in either case).
    /// - Throws: `ValidationError` `.invalidArgument` (field `quietHours`) for anything else.
    public init(parsing text: String) throws(ValidationError) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 1 || parts.count == 2, let range = parts.last else { throw Self.malformed(text) }
        var weekdays: Set<Weekday> = []
        if parts.count == 2 {
            for code in parts[0].split(separator: ",", omittingEmptySubsequences: false) {
                guard let weekday = Weekday(code: code.uppercased()) else { throw Self.malformed(text) }
                weekdays.insert(weekday)
            }
        }
        let bounds = range.split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = Self.minutes(of: bounds[0]), let end = Self.minutes(of: bounds[1]) else {
            throw Self.malformed(text)
        }
        self.init(start: start, end: end, weekdays: weekdays)
        try validate(field: "quietHours")
    }

    /// `HH:MM` (two digits each, 00:00–23:59) as minutes after midnight, or `nil`.
    public static func minutes(of text: some StringProtocol) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"),
            bytes.indices.allSatisfy({ $0 == 2 || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[$0]) })
        else { return nil }
        let digit = { (index: Int) in Int(bytes[index] - UInt8(ascii: "0")) }
        let hour = digit(0) * 10 + digit(1)
        let minute = digit(3) * 10 + digit(4)
        guard hour < 24, minute < 60 else { return nil }
        return hour * 60 + minute
    }

    /// `HH:MM` of minutes after midnight.
    public static func text(ofMinutes minutes: Int) -> String {
        let hour = minutes / 60
        let minute = minutes % 60
        return "\(hour < 10 ? "0" : "")\(hour):\(minute < 10 ? "0" : "")\(minute)"
    }

    private static func malformed(_ text: String) -> ValidationError {
        ValidationError(
            .invalidArgument, field: "quietHours",
            "'\(text)' is not a quiet window such as 22:00-07:00 or MO,TU,WE,TH,FR 22:00-07:00")
    }

    /// When a firing delivered at `instant` (UTC) may be delivered, if `instant` falls inside
    /// one of `windows` on the wall clock of `zone`: the end of that window, followed through
    /// any window that starts at or before it ends (`22:00-00:00` then `00:00-07:00` release at
    /// 07:00); `nil` when `instant` is outside every window.
    ///
    /// A window's start and end become instants as triggers' wall-clock times do
    /// (``ZoneRules/resolve(_:in:)``, RFC 5545 §3.3.5): a time in a spring-forward gap moves
    /// forward by the gap, a time in a fall-back overlap takes its first instant, so a
    /// `22:00-07:00` night is 8 hours long on the night the clocks spring forward and 10 on
    /// the night they fall back. The start is inclusive, the end exclusive; a weekday names
    /// the day a window starts on.
    public static func release(of instant: Date, windows: [QuietWindow], in zone: TimeZone) -> Date? {
        guard !windows.isEmpty else { return nil }
        var released: Date?
        var probe = instant
        // Each step moves to a later window end; chains longer than a week of windows stop.
        for _ in 0..<(2 * maximumCount) {
            guard let end = end(ofWindowAround: probe, windows: windows, in: zone), end > probe else { break }
            released = end
            probe = end
        }
        return released
    }

    /// The latest end among the windows that hold `instant`, or `nil`.
    private static func end(ofWindowAround instant: Date, windows: [QuietWindow], in zone: TimeZone) -> Date? {
        let local = ZoneRules.localDateTime(at: instant, in: zone)
        let today = LocalDateTime(year: local.year, month: local.month, day: local.day)
        guard today.isValid else { return nil }
        var latest: Date?
        // A window holding `instant` started today or yesterday (windows last under a day).
        for startDay in [today.adding(days: -1), today].compactMap({ $0 }) {
            for window in windows where window.weekdays.isEmpty || window.weekdays.contains(startDay.weekday) {
                guard let endDay = window.end > window.start ? startDay : startDay.adding(days: 1) else { continue }
                let startAt = ZoneRules.resolve(startDay.at(minutes: window.start), in: zone)
                let endAt = ZoneRules.resolve(endDay.at(minutes: window.end), in: zone)
                if startAt <= instant && instant < endAt && latest.map({ endAt > $0 }) ?? true { latest = endAt }
            }
        }
        return latest
    }
}

extension LocalDateTime {
    /// The same day at `minutes` after midnight.
    fileprivate func at(minutes: Int) -> LocalDateTime {
        LocalDateTime(year: year, month: month, day: day, hour: minutes / 60, minute: minutes % 60)
    }
}

extension QuietWindow: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case start, end, weekdays
    }

    /// Decodes the JSON shape above.
    /// - Throws: `DecodingError` for a time that is not `HH:MM`, an unknown weekday code or
    ///   an unknown key (an ``UnknownFieldError`` underneath).
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func minutes(_ key: CodingKeys) throws -> Int {
            let text = try container.decode(String.self, forKey: key)
            guard let minutes = Self.minutes(of: text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "'\(text)' is not a time of day HH:MM (00:00 to 23:59)")
            }
            return minutes
        }
        start = try minutes(.start)
        end = try minutes(.end)
        weekdays = []
        for code in try container.decodeIfPresent([String].self, forKey: .weekdays) ?? [] {
            guard let weekday = Weekday(code: code) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .weekdays, in: container, debugDescription: "'\(code)' is not a weekday code MO … SU")
            }
            weekdays.insert(weekday)
        }
    }

    /// Encodes the JSON shape above; weekdays in order Monday to Sunday, omitted when empty.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.text(ofMinutes: start), forKey: .start)
        try container.encode(Self.text(ofMinutes: end), forKey: .end)
        if !weekdays.isEmpty {
            try container.encode(weekdays.sorted { $0.rawValue < $1.rawValue }.map(\.code), forKey: .weekdays)
        }
    }
}
