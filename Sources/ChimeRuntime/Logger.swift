import Foundation
import Synchronization

/// A line logger to standard error: `2026-11-29T13:00:00.123Z INFO coordinator: message key=value`,
/// or one JSON object a line when `json` is set
/// (`{"time":"…","level":"info","label":"coordinator","message":"…","pid":18066}`), each
/// line optionally led by its syslog priority (`<6>`) for journald. Thread-safe.
///
/// Copies share their minimum level (`minimumLevel`), so a reload (SIGHUP) that sets it
/// changes it for every service holding a copy.
public struct Logger: Sendable {
    /// Severity, in increasing order.
    public enum Level: Int, Comparable, Sendable, CaseIterable {
        case debug, info, warning, error
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
        var name: String {
            switch self {
            case .debug: "DEBUG"
            case .info: "INFO"
            case .warning: "WARN"
            case .error: "ERROR"
            }
        }

        /// The syslog priority (RFC 5424 §6.2.1 severity) journald reads from a `<N>` prefix:
        /// 3 error, 4 warning, 6 informational, 7 debug.
        public var syslogPriority: Int {
            switch self {
            case .debug: 7
            case .info: 6
            case .warning: 4
            case .error: 3
            }
        }

        /// Parses `debug`, `info`, `warning` or `error`; `nil` for anything else.
        public init?(name: String) {
            guard let level = Level.allCases.first(where: { "\($0)" == name }) else { return nil }
            self = level
        }
    }

    /// The component name printed on every line (`coordinator`, `worker`).
    public var label: String
    /// Whether to print JSON lines instead of text.
    public var json: Bool
    /// Whether each line starts with its syslog priority (`<4>`), as `sd-daemon(3)` describes
    /// for services whose standard error goes to journald (`journalctl -p warning` then filters).
    public var syslogPrefix: Bool
    private let threshold: Threshold

    /// Lines below this level are dropped; shared by every copy of this logger.
    public var minimumLevel: Level {
        get { Level(rawValue: threshold.rawValue.load(ordering: .relaxed)) ?? .info }
        nonmutating set { threshold.rawValue.store(newValue.rawValue, ordering: .relaxed) }
    }

    /// Creates the value from its fields (see each property for meaning and units).
    public init(label: String, minimumLevel: Level = .info, json: Bool = false, syslogPrefix: Bool = false) {
        self.label = label
        self.json = json
        self.syslogPrefix = syslogPrefix
        self.threshold = Threshold(minimumLevel)
    }

    /// Logs `message` at `.debug` with `metadata` as `key=value` pairs (or JSON fields).
    public func debug(_ message: @autoclosure () -> String, _ metadata: [String: LogValue] = [:]) {
        log(.debug, message(), metadata)
    }
    /// Logs `message` at `.info` with `metadata` as `key=value` pairs (or JSON fields).
    public func info(_ message: @autoclosure () -> String, _ metadata: [String: LogValue] = [:]) {
        log(.info, message(), metadata)
    }
    /// Logs `message` at `.warning` with `metadata` as `key=value` pairs (or JSON fields).
    public func warning(_ message: @autoclosure () -> String, _ metadata: [String: LogValue] = [:]) {
        log(.warning, message(), metadata)
    }
    /// Logs `message` at `.error` with `metadata` as `key=value` pairs (or JSON fields).
    public func error(_ message: @autoclosure () -> String, _ metadata: [String: LogValue] = [:]) {
        log(.error, message(), metadata)
    }

    /// Logs `message` at `.debug` with text-only metadata (every value a JSON string).
    public func debug(_ message: @autoclosure () -> String, _ metadata: [String: String]) {
        log(.debug, message(), metadata)
    }
    /// Logs `message` at `.info` with text-only metadata (every value a JSON string).
    public func info(_ message: @autoclosure () -> String, _ metadata: [String: String]) {
        log(.info, message(), metadata)
    }
    /// Logs `message` at `.warning` with text-only metadata (every value a JSON string).
    public func warning(_ message: @autoclosure () -> String, _ metadata: [String: String]) {
        log(.warning, message(), metadata)
    }
    /// Logs `message` at `.error` with text-only metadata (every value a JSON string).
    public func error(_ message: @autoclosure () -> String, _ metadata: [String: String]) {
        log(.error, message(), metadata)
    }

    /// Logs `message` at `level` with text-only metadata (every value a JSON string).
    public func log(_ level: Level, _ message: String, _ metadata: [String: String]) {
        guard level >= minimumLevel else { return }
        log(level, message, metadata.mapValues { LogValue.string($0) })
    }

    /// Writes one line when `level >= minimumLevel`.
    public func log(_ level: Level, _ message: String, _ metadata: [String: LogValue]) {
        guard level >= minimumLevel else { return }
        let line = format(level, message, metadata, at: Date()) + "\n"
        StandardStreams.writeError(line)
    }

    /// The line `log` writes at `date`, without its newline. JSON lines hold `time`, `level`,
    /// `label` and `message` first, then the metadata in key order (a metadata key equal to one
    /// of those four is left out, so no key repeats); text lines the metadata in key order.
    public func format(_ level: Level, _ message: String, _ metadata: [String: LogValue], at date: Date) -> String {
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
            line += "\(time) \(level.name) \(label): \(message)"
            for key in metadata.keys.sorted() { line += " \(key)=\(metadata[key]!)" }
        }
        return line
    }

    static func timestamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(milliseconds % 1000))
    }

    /// The minimum level shared by the copies of one logger.
    private final class Threshold: Sendable {
        let rawValue: Atomic<Int>
        init(_ level: Level) { rawValue = Atomic(level.rawValue) }
    }
}
