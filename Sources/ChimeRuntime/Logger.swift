import Foundation
import Synchronization

/// A logger in swift-log's shape: a `label`, levels, metadata on the logger and on each
/// line, and a ``LogHandler`` every line goes through. The default handler,
/// ``StandardErrorLogHandler``, writes to standard error
/// `2026-11-29T13:00:00.123Z INFO coordinator: message key=value`, or one JSON object a line
/// (`{"time":"…","level":"info","label":"coordinator","message":"…","pid":18066}`), each
/// line optionally led by its syslog priority (`<6>`) for journald (``LogLineFormat``).
/// Tests hand in a handler that keeps the lines. Thread-safe.
///
/// Unlike swift-log, the minimum level belongs to the logger and is shared by its copies
/// (`minimumLevel`), so a reload (SIGHUP) that sets it changes it for every service holding
/// a copy; a handler sees only the lines that pass it.
public struct Logger: Sendable {
    /// Severity, in increasing order.
    public enum Level: Int, Comparable, Sendable, CaseIterable {
        case debug, info, warning, error
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The name a text line shows: `DEBUG`, `INFO`, `WARN`, `ERROR`.
        public var name: String {
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

    /// The component name on every line (`coordinator`, `worker`).
    public var label: String
    /// Where the lines go.
    public var handler: any LogHandler
    /// Metadata on every line of this logger; a line's own metadata wins over a key here.
    public var metadata: [String: LogValue] = [:]
    private let threshold: Threshold

    /// Lines below this level are dropped; shared by every copy of this logger.
    public var minimumLevel: Level {
        get { Level(rawValue: threshold.rawValue.load(ordering: .relaxed)) ?? .info }
        nonmutating set { threshold.rawValue.store(newValue.rawValue, ordering: .relaxed) }
    }

    /// A logger whose lines go to `handler`.
    public init(label: String, minimumLevel: Level = .info, handler: any LogHandler) {
        self.label = label
        self.handler = handler
        self.threshold = Threshold(minimumLevel)
    }

    /// A logger writing to standard error in the text format, or JSON lines when `json`,
    /// each led by its syslog priority when `syslogPrefix`.
    public init(label: String, minimumLevel: Level = .info, json: Bool = false, syslogPrefix: Bool = false) {
        self.init(
            label: label, minimumLevel: minimumLevel,
            handler: StandardErrorLogHandler(format: LogLineFormat(json: json, syslogPrefix: syslogPrefix)))
    }

    /// One key of ``metadata``.
    public subscript(metadataKey key: String) -> LogValue? {
        get { metadata[key] }
        set { metadata[key] = newValue }
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

    /// Hands one line to the handler when `level >= minimumLevel`.
    public func log(_ level: Level, _ message: String, _ metadata: [String: LogValue]) {
        guard level >= minimumLevel else { return }
        let merged = self.metadata.isEmpty ? metadata : self.metadata.merging(metadata) { _, line in line }
        handler.log(level: level, message: message, metadata: merged, label: label)
    }

    /// The minimum level shared by the copies of one logger.
    private final class Threshold: Sendable {
        let rawValue: Atomic<Int>
        init(_ level: Level) { rawValue = Atomic(level.rawValue) }
    }
}
