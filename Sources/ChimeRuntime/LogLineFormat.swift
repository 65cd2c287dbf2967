import Foundation

/// The lines Chime logs (Docs/Chime.docc/Operations/Logs.md): text,
/// `2026-11-29T13:00:00.123Z INFO coordinator: message key=value` with the metadata in key
/// order, or one JSON object a line,
/// `{"time":"…","level":"info","label":"coordinator","message":"…","pid":18066}`; either
/// optionally led by its syslog priority (`<6>`), as `sd-daemon(3)` describes for services
/// whose standard error goes to journald (`journalctl -p warning` then filters).
public struct LogLineFormat: Sendable, Hashable {
    /// Whether lines are JSON objects instead of text.
    public var json: Bool
    /// Whether each line starts with its syslog priority (`<4>`).
    public var syslogPrefix: Bool

    /// Creates the value from its fields (see each property for meaning).
    public init(json: Bool = false, syslogPrefix: Bool = false) {
        self.json = json
        self.syslogPrefix = syslogPrefix
    }

    /// The line for one entry at `date`, without its newline. JSON lines hold `time`,
    /// `level`, `label` and `message` first, then the metadata in key order (a metadata key
    /// equal to one of those four is left out, so no key repeats); text lines the metadata
    /// in key order.
    public func line(
        _ level: Logger.Level, _ message: String, _ metadata: [String: LogValue], label: String, at date: Date
    ) -> String {
        let time = Self.timestamp(date)
        var line = syslogPrefix ? "<\(level.syslogPriority)>" : ""
        if json {
            let fixed: [(String, LogValue)] = [
                ("time", .string(time)), ("level", .string(level.name.lowercased())), ("label", .string(label)),
                ("message", .string(message)),
            ]
            let reserved = Set(fixed.map(\.0))
            let extra = metadata.filter { !reserved.contains($0.key) }.sorted { $0.key < $1.key }
            line += "{"
            line += (fixed + extra).map { LogValue.jsonQuoted($0.0) + ":" + $0.1.jsonText }.joined(separator: ",")
            line += "}"
        } else {
            line += "\(time) " + Self.text(level, message, metadata, label: label)
        }
        return line
    }

    /// A text line without its time: `WARN coordinator: worker lost leases=2 worker=w1`.
    public static func text(_ level: Logger.Level, _ message: String, _ metadata: [String: LogValue], label: String) -> String {
        var text = "\(level.name) \(label): \(message)"
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { text += " \(key)=\(value)" }
        return text
    }

    /// `2026-11-29T13:00:00.123Z`: UTC, milliseconds rounded down.
    static func timestamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(milliseconds % 1000))
    }
}
