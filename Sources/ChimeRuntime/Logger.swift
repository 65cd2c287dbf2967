import Foundation

/// A line logger to standard error: `2026-11-29T13:00:00.123Z INFO coordinator: message key=value`,
/// or one JSON object a line when `json` is set. Thread-safe.
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
    }

    /// The component name printed on every line (`coordinator`, `worker`).
    public var label: String
    /// Lines below this level are dropped.
    public var minimumLevel: Level
    /// Whether to print JSON lines instead of text.
    public var json: Bool

    /// Creates the value from its fields (see each property for meaning and units).
    public init(label: String, minimumLevel: Level = .info, json: Bool = false) {
        self.label = label
        self.minimumLevel = minimumLevel
        self.json = json
    }

    /// Logs `message` at `.debug` with `metadata` as `key=value` pairs (or JSON fields).
    public func debug(_ message: @autoclosure () -> String, _ metadata: [String: String] = [:]) {
        log(.debug, message(), metadata)
    }
    /// Logs `message` at `.info` with `metadata` as `key=value` pairs (or JSON fields).
    public func info(_ message: @autoclosure () -> String, _ metadata: [String: String] = [:]) {
        log(.info, message(), metadata)
    }
    /// Logs `message` at `.warning` with `metadata` as `key=value` pairs (or JSON fields).
    public func warning(_ message: @autoclosure () -> String, _ metadata: [String: String] = [:]) {
        log(.warning, message(), metadata)
    }
    /// Logs `message` at `.error` with `metadata` as `key=value` pairs (or JSON fields).
    public func error(_ message: @autoclosure () -> String, _ metadata: [String: String] = [:]) {
        log(.error, message(), metadata)
    }

    /// Writes one line when `level >= minimumLevel`.
    public func log(_ level: Level, _ message: String, _ metadata: [String: String]) {
        guard level >= minimumLevel else { return }
        let time = Self.timestamp(Date())
        var line: String
        if json {
            var object: [String: String] = metadata
            object["time"] = time
            object["level"] = level.name.lowercased()
            object["label"] = label
            object["message"] = message
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            line = String(decoding: data, as: UTF8.self)
        } else {
            line = "\(time) \(level.name) \(label): \(message)"
            for key in metadata.keys.sorted() { line += " \(key)=\(metadata[key]!)" }
        }
        line += "\n"
        FileHandle.standardError.write(Data(line.utf8))
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
}
