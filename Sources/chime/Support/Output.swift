import ChimeCore
import ChimeWire
import ChimeCommandLine
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

/// Pads or truncates to `width` characters, always ending with a space so that columns never
/// run together (a value of `width` characters or more is cut, with "…").
func column(_ text: String, _ width: Int) -> String {
    if text.count >= width { return String(text.prefix(max(0, width - 2))) + "… " }
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

/// A one-line human description of a hand-over event: `… handover m-1 slots 0-63,100 shard 0 → 2 (map epoch 3, seq 812)`.
func describe(_ event: HandOverEvent) -> String {
    let slots = event.slots.map { $0.first == $0.last ? "\($0.first)" : "\($0.first)-\($0.last)" }.joined(separator: ",")
    return "\(RFC3339.format(event.at)) handover \(event.move) slots \(slots) shard \(event.shard) → \(event.target) "
        + "(map epoch \(event.mapEpoch), seq \(event.seq))"
}

/// Prints a result gathered across shards: with `--json` one document (`ok` false with the
/// `partial` error when a shard did not answer), else nothing here; then, when partial, the
/// error line on standard error.
/// - Returns: 1 when `partial` is set, else 0.
func finishGathered<Result: Codable & Sendable>(_ result: Result, partial: WireError?, json: Bool) -> Int32 {
    if json {
        var reply = ControlReply(requestId: nil, result: result)
        if let partial {
            reply.ok = false
            reply.error = partial
        }
        printJSON(WireCodec().encode(reply))
    }
    guard let partial else { return 0 }
    if !json { printError(CommandFailure(partial).humanMessage) }
    return 1
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

/// Runs `body`; a refused `cursor` (the user's `--cursor`) becomes a usage error (exit 2).
/// - Throws: `UsageError` for a bad cursor; any other `WireError` as it is.
func cursorAsUsage<Value>(_ body: () throws(WireError) -> Value) throws -> Value {
    let outcome = Result { () throws(WireError) in try body() }
    switch outcome {
    case .success(let value): return value
    case .failure(let error) where error.field == "cursor" && error.code == .invalidArgument: throw UsageError(error.message)
    case .failure(let error): throw error
    }
}
