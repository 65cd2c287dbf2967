import Foundation

/// The `Retry-After` header field (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
public enum RetryAfter {
    /// The delay it asks for, in seconds from `now` (never negative); `nil` when absent or
    /// neither form (an IMF-fixdate such as `Wed, 21 Oct 2015 07:28:00 GMT`). Delays are
    /// capped at a day.
    public static func seconds(_ value: String?, now: Date) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            guard let seconds = Int(value) else { return 86_400 }
            return Double(min(seconds, 86_400))
        }
        // An IMF-fixdate is 29 printable ASCII bytes. Anything else never reaches the
        // formatter: Foundation's DateFormatter traps on some non-ASCII text (a letter with a
        // combining mark, found by the provider fuzz target), and a header is outside input.
        guard value.utf8.count <= 64, value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: value) else { return nil }
        return min(max(date.timeIntervalSince(now), 0), 86_400)
    }
}
