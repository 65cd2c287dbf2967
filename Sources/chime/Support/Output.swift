import ChimeCore
import ChimeWire
import Foundation
import ChimeClient

/// Prints raw JSON bytes as one line.
func printJSON(_ data: Data) {
    output(String(decoding: data, as: UTF8.self))
}

/// "in 2s", "3m ago", or an absolute UTC date past a week (``HumanTime``).
func relative(_ date: Date, from now: Date = Date()) -> String {
    HumanTime.describe(date, relativeTo: now)
}

/// Pads or truncates to `width` characters.
func column(_ text: String, _ width: Int) -> String {
    if text.count > width { return String(text.prefix(width - 1)) + "…" }
    return text.padding(toLength: width, withPad: " ", startingAt: 0)
}

/// A one-line human description of a fire event.
func describe(_ event: FireEvent) -> String {
    let content = event.firing.content
    let text = [content.title, content.body].compactMap { $0 }.joined(separator: " — ")
    let lateness = event.firedAt.timeIntervalSince(event.firing.dueAt) * 1000
    var line = "\(RFC3339.format(event.firedAt)) fire \(event.firing.recipient) \(event.firing.reminderId)"
    if !text.isEmpty { line += " \"\(text)\"" }
    line += String(format: " (due %@, %+.1f ms", RFC3339.format(event.firing.dueAt), lateness)
    if event.firing.late { line += ", late" }
    if event.firing.attempt > 1 { line += ", attempt \(event.firing.attempt)" }
    line += ", by \(event.publisher))"
    return line
}

extension ControlClient {
    /// Sends a request, returning the decoded reply and its raw bytes (for `--json`).
    /// - Throws: `WireError` (the coordinator's error, or `.unavailable`).
    func call<Result: Codable & Sendable>(_ request: ControlRequest, _ type: Result.Type) throws -> (ControlReply<Result>, Data) {
        try sendReturningBytes(request, expecting: type)
    }
}

/// Makes a control client from the configuration's connect address and client settings.
func makeControlClient(_ arguments: Arguments) throws -> ControlClient {
    let configuration = try CommonOptions.configuration(arguments)
    return try ControlClient(
        endpoint: configuration.endpoints.control.connect,
        timeout: .milliseconds(configuration.client.requestTimeoutMilliseconds),
        retries: configuration.client.retries, curve: try CommonOptions.clientKeys(configuration, role: .operator))
}

extension StoreReport {
    /// A few lines for `chime ctl store|snapshot|compact`.
    var humanDescription: String {
        var lines = ["store \(directory ?? "(none: in memory)"), fsync \(fsync), epoch \(epoch)"]
        lines.append("journal: \(journalBytes) bytes in \(segments) segments, \(appendedRecords) records appended since start")
        lines.append("snapshots: \(snapshots) (\(snapshotBytes) bytes)" + (snapshotSequence.map { ", newest covers sequence \($0)" } ?? ""))
        if let lastFsyncMilliseconds { lines.append(String(format: "last fsync: %.3f ms", lastFsyncMilliseconds)) }
        if let snapshotMilliseconds { lines.append(String(format: "snapshot written in %.1f ms", snapshotMilliseconds)) }
        return lines.joined(separator: "\n")
    }
}
