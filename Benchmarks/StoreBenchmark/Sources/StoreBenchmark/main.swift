// Measures journal throughput: append + sync of N entries in batches, per fsync policy,
// and the time to reopen (recover) the result. A package of its own (not built by the main
// package's `swift build`); run in release mode from the repository root:
//   swift run -c release --package-path Benchmarks/StoreBenchmark StoreBenchmark [entries] [directory]
// or the binary reminder codec against JSON (see CodecBenchmark.swift):
//   swift run -c release --package-path Benchmarks/StoreBenchmark StoreBenchmark codec [iterations]
// or decoding a 1,000-reminder schedule request, JSONDecoder against the fast path
// (see RequestBenchmark.swift):
//   swift run -c release --package-path Benchmarks/StoreBenchmark StoreBenchmark request [iterations]
// or the coordinator's pure state in a W1-shaped burst (see StateBenchmark.swift):
//   swift run -c release --package-path Benchmarks/StoreBenchmark StoreBenchmark state [firings]
// or the coordinator's pure state after a W4-shaped ingest, heap bytes a reminder
// (see MemoryBenchmark.swift):
//   swift run -c release --package-path Benchmarks/StoreBenchmark StoreBenchmark memory [reminders] [recipients]
import ChimeCore
import ChimeJournal
import ChimeStore
import Foundation

let arguments = CommandLine.arguments
if arguments.count > 1, arguments[1] == "codec" {
    try runCodecBenchmark(iterations: arguments.count > 2 ? Int(arguments[2]) ?? 200_000 : 200_000)
    exit(0)
}
if arguments.count > 1, arguments[1] == "state" {
    runStateBenchmark(count: arguments.count > 2 ? Int(arguments[2]) ?? 100_000 : 100_000, rounds: 7)
    exit(0)
}
if arguments.count > 1, arguments[1] == "memory" {
    runMemoryBenchmark(
        count: arguments.count > 2 ? Int(arguments[2]) ?? 1_000_000 : 1_000_000,
        recipients: arguments.count > 3 ? Int(arguments[3]) ?? 1000 : 1000)
    exit(0)
}
if arguments.count > 1, arguments[1] == "request" {
    try runRequestBenchmark(iterations: arguments.count > 2 ? Int(arguments[2]) ?? 50 : 50)
    exit(0)
}
let count = arguments.count > 1 ? Int(arguments[1]) ?? 100_000 : 100_000
let parent = URL(fileURLWithPath: arguments.count > 2 ? arguments[2] : NSTemporaryDirectory())
    .appendingPathComponent("chime-store-bench-\(getpid())")

func makeEntry(_ index: Int) -> JournalEntry {
    let instant = Date(timeIntervalSince1970: 1_800_000_000 + Double(index))
    let reminder = Reminder(
        id: ReminderID("reminder-\(index)"), recipient: RecipientID("user-\(index % 1000)"),
        content: Content(title: "Stand-up", body: "Daily stand-up in room 4 (\(index))", sound: "default", badge: 1),
        trigger: Trigger(start: .instant(instant)))
    return .scheduled(reminder, at: instant)
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
let entries = (0..<count).map(makeEntry)
print("entries: \(count), directory: \(parent.path)")
let encoding = try seconds {
    let encoder = JSONEncoder()
    for entry in entries { _ = try encoder.encode(entry) }
}
print(String(format: "JSON encoding alone: %.0f entries/s", Double(count) / encoding))

for policy in [FsyncPolicy.always, .never] {
    for batch in [1, 100, 10_000] {
        let directory = parent.appendingPathComponent("\(policy)-\(batch)")
        let (journal, _) = try FileJournal.open(directory: directory, fsync: policy)
        let elapsed = try seconds {
            for start in stride(from: 0, to: count, by: batch) {
                try journal.append(Array(entries[start..<min(start + batch, count)]))
                try journal.sync()
            }
        }
        let statistics = journal.statistics
        try journal.close()
        let meanFsync = statistics.fsyncCount > 0 ? statistics.totalFsyncSeconds / Double(statistics.fsyncCount) : 0
        var replayed = 0
        let recovery = try seconds {
            let (reopened, _) = try FileJournal.open(directory: directory, fsync: .never) { _, _ in replayed += 1 }
            try reopened.close()
        }
        print(
            String(
                format:
                    "%@ batch %6d: %9.0f entries/s, %7.1f MB/s, %6d fdatasync (mean %.3f ms), %.2f s; reopen+replay %d in %.2f s",
                "\(policy)".padding(toLength: 6, withPad: " ", startingAt: 0), batch, Double(count) / elapsed,
                Double(statistics.bytesWritten) / elapsed / 1e6, statistics.fsyncCount, meanFsync * 1000, elapsed,
                replayed, recovery))
        try FileManager.default.removeItem(at: directory)
    }
}
try? FileManager.default.removeItem(at: parent)
