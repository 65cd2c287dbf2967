import Foundation

/// Where a ``Logger``'s lines go, in swift-log's shape (`LogHandler.log(level:message:
/// metadata:…)`): the logger filters by level and merges its metadata, the handler writes.
///
/// Called from any thread the logger is used on, possibly at once: a handler serializes
/// what must not interleave.
public protocol LogHandler: Sendable {
    /// Writes one line that passed the logger's minimum level.
    /// - Parameters:
    ///   - label: the logger's ``Logger/label``.
    ///   - metadata: the logger's metadata merged with the line's (the line's wins).
    func log(level: Logger.Level, message: String, metadata: [String: LogValue], label: String)
}

/// Writes each line to standard error in ``LogLineFormat``, stamped with the time of the
/// call: one `write(2)` per line, so lines from several threads never interleave.
public struct StandardErrorLogHandler: LogHandler {
    /// Text or JSON, with or without the syslog priority.
    public var format: LogLineFormat

    /// A handler writing lines in `format`.
    public init(format: LogLineFormat = LogLineFormat()) { self.format = format }

    /// Writes the line and its newline.
    public func log(level: Logger.Level, message: String, metadata: [String: LogValue], label: String) {
        let line = format.line(level, message, metadata, label: label, at: Date()) + "\n"
        StandardStreams.writeError(line)
    }
}
