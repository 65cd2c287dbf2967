import Foundation

/// Durations and instants the way a person reads them: `3m ago`, `in 2h 5m`, and an absolute
/// UTC date (`2026-11-24 13:00 UTC`) once the distance passes a week.
public enum HumanTime {
    /// Seconds past which ``describe(_:relativeTo:)`` prints an absolute date: one week.
    public static let absoluteThresholdSeconds: Double = 7 * 86_400

    /// A duration in at most two units, largest first, rounded down to whole seconds:
    /// `0s`, `45s`, `3m`, `3m 20s`, `2h 5m`, `4d 3h`. Units are `d` (86,400 s), `h`, `m`, `s`;
    /// a week and more is counted in days (`12d 4h`). Negative values describe their
    /// magnitude; non-finite values print `unknown`.
    public static func duration(seconds: Double) -> String {
        guard seconds.isFinite else { return "unknown" }
        let magnitude = abs(seconds)
        // Beyond Int64 seconds only the day count matters; clamp before converting.
        let whole = magnitude >= 9e15 ? Int64(9e15) : Int64(magnitude.rounded(.down))
        let parts: [(Int64, String)] = [
            (whole / 86_400, "d"), ((whole % 86_400) / 3600, "h"), ((whole % 3600) / 60, "m"), (whole % 60, "s"),
        ]
        guard let first = parts.firstIndex(where: { $0.0 > 0 }) else { return "0s" }
        var text = "\(parts[first].0)\(parts[first].1)"
        if first + 1 < parts.count, parts[first + 1].0 > 0 {
            text += " \(parts[first + 1].0)\(parts[first + 1].1)"
        }
        return text
    }

    /// `date` relative to `now`: `in 2h 5m`, `3m ago`, `now` within half a second, and
    /// ``absolute(_:)`` when more than ``absoluteThresholdSeconds`` away (either side).
    public static func describe(_ date: Date, relativeTo now: Date) -> String {
        let seconds = date.timeIntervalSince(now)
        guard seconds.isFinite else { return "unknown" }
        if abs(seconds) > absoluteThresholdSeconds { return absolute(date) }
        if abs(seconds) < 0.5 { return "now" }
        let text = duration(seconds: abs(seconds).rounded())
        return seconds > 0 ? "in \(text)" : "\(text) ago"
    }

    /// `2026-11-24 13:00 UTC`: the instant to the minute (rounded down) in UTC.
    public static func absolute(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        func two(_ value: Int?) -> String {
            let number = value ?? 0
            return number < 10 ? "0\(number)" : "\(number)"
        }
        let year = parts.year ?? 0
        let yearText = year >= 0 && year < 1000 ? String(repeating: "0", count: 4 - String(year).count) + String(year) : String(year)
        return "\(yearText)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute)) UTC"
    }
}
