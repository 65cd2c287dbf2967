import ChimeRuntime
import ChimeWire
import ChimeCommandLine
import Foundation

/// `--quiet` and `--chunk`, shared by the bulk commands.
enum BulkOptions {
    static let specs: [OptionSpec] = [
        OptionSpec(name: "quiet", value: nil, help: "No progress and no summary line (item errors still go to standard error)."),
        OptionSpec(name: "chunk", value: "N", help: "Reminders per request at most (default 1000; also capped by coordinator.maxRemindersPerRequest)."),
        OptionSpec(name: "in-flight", value: "N", help: "Requests sent and not yet answered at most, over all shards (default 4; 1 waits for each reply)."),
    ]
}

/// One bulk schedule from the command line: the scheduler, its progress, the output
/// contract (item errors on standard error as they come, a summary line, or with `--json`
/// one JSON document on stdout and nothing on stderr) and the exit status (1 when any item
/// failed).
final class BulkRun {
    let scheduler: BulkScheduler
    let progress: BulkProgress
    let isJSON: Bool
    let isQuiet: Bool

    /// - Throws: `UsageError` for a bad `--chunk`; configuration errors.
    init(_ arguments: Arguments, verb: String) throws {
        isJSON = arguments.has("json")
        isQuiet = arguments.has("quiet")
        let chunk = try arguments.integer("chunk") ?? 1000
        guard (1...1_000_000).contains(chunk) else { throw UsageError("--chunk must be between 1 and 1000000, not \(chunk)") }
        let inFlight = try arguments.integer("in-flight") ?? BulkScheduler.defaultChunksInFlight
        guard (1...64).contains(inFlight) else { throw UsageError("--in-flight must be between 1 and 64, not \(inFlight)") }
        // With --json the one document on stdout says everything: nothing goes to stderr.
        progress = BulkProgress(verb: verb, quiet: isQuiet || isJSON)
        scheduler = try BulkScheduler(
            client: try makeControlClient(arguments), configuration: try CommonOptions.configuration(arguments),
            chunkSize: chunk, chunksInFlight: inFlight, progress: progress)
        let progress = progress
        let isJSON = isJSON
        scheduler.onFailure = { failure in
            guard !isJSON else { return }
            progress.clear()
            StandardStreams.writeError("chime: \(failure.line)\n")
        }
        var shownWarnings = 0
        scheduler.onWarning = { warning in
            shownWarnings += 1
            // A file of past one-shots would print one warning per reminder: the first 10 show.
            guard shownWarnings <= 10, !isJSON else { return }
            progress.clear()
            StandardStreams.writeError("chime: warning: \(warning)\n")
        }
    }

    /// Sends what is left and prints the outcome.
    /// - Returns: 0 when every item was scheduled, else 1.
    /// - Throws: `WireError(.unavailable)` when the coordinator stopped answering.
    func finish(extra: [String: Any] = [:]) throws -> Int32 {
        try scheduler.flush()
        progress.clear()
        if scheduler.warningCount > 10 && !isJSON {
            StandardStreams.writeError("chime: \(scheduler.warningCount - 10) more warning(s) not shown\n")
        }
        let failed = scheduler.failed
        if isJSON {
            var document: [String: Any] = ["ok": failed == 0, "result": scheduler.resultObject.merging(extra) { $1 }]
            if failed > 0 {
                document["error"] = ["code": "partial", "message": "\(failed) of \(failed + scheduler.scheduled) item(s) failed"]
            }
            output(jsonLine(document))
        } else if !isQuiet {
            output(progress.summary(done: scheduler.scheduled, failed: failed))
        }
        return failed == 0 ? 0 : 1
    }
}
