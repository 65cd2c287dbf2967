import ChimeRuntime
import Foundation
import Synchronization

/// A ``LogHandler`` that keeps every line instead of writing it, for tests that check what
/// a service logs: `Logger(label: "coordinator", handler: capture)`, then `capture.lines`.
public final class CapturingLogHandler: LogHandler {
    /// One line as the logger handed it over.
    public struct Entry: Sendable, Hashable {
        /// Its level.
        public var level: Logger.Level
        /// Its message.
        public var message: String
        /// The logger's and the line's metadata.
        public var metadata: [String: LogValue]
        /// The logger's label.
        public var label: String
    }

    private let entries = Mutex<[Entry]>([])

    /// An empty capture.
    public init() {}

    /// Keeps the line.
    public func log(level: Logger.Level, message: String, metadata: [String: LogValue], label: String) {
        entries.withLock { $0.append(Entry(level: level, message: message, metadata: metadata, label: label)) }
    }

    /// Every line so far, in order.
    public var all: [Entry] { entries.withLock { $0 } }

    /// Every line so far as text without its time (`WARN coordinator: worker lost leases=2`).
    public var lines: [String] { all.map { LogLineFormat.text($0.level, $0.message, $0.metadata, label: $0.label) } }
}
