import ChimeCore
import ChimeCoordinator
import ChimeWire
import Foundation

#if canImport(Glibc)
import Glibc

@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
@_silgen_name("malloc_stats")
private func glibcMallocStats()
#endif

/// The coordinator's pure state after a W4-shaped ingest, with no sockets and no disk: `count`
/// one-shots with a 100-byte body, due a day ahead over an hour, id `i` to recipient
/// `user-(i mod recipients)`, scheduled in requests of 1,000 decoded from the bench's own JSON
/// (`Ingestor.requestBody`'s shape, with a request id each). Prints the growth of the resident
/// size, per reminder, before and after `malloc_trim(0)`, and glibc's `malloc_stats` (bytes in
/// use) on standard error before and after the ingest.
func runMemoryBenchmark(count: Int, recipients: Int) {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let client = ClientAddress(routing: [Data([1])])
    let body = String(repeating: "Chime benchmark body. ", count: 5).prefix(100)
    printHeapStatistics()
    let emptyResident = residentBytes()
    var state = CoordinatorState(configuration: CoordinatorConfiguration(), startedAt: start)
    state.finishRecovery(at: start)
    for first in stride(from: 0, to: count, by: 1000) {
        var text = #"{"op":"schedule","requestId":"bench-\#(first / 1000)","reminders":["#
        for id in first..<min(count, first + 1000) {
            if id > first { text += "," }
            let due = start.timeIntervalSince1970 + 86_400 + Double(id) * 3_600 / Double(count)
            let at = RFC3339.format(Date(timeIntervalSince1970: (due * 1000).rounded(.up) / 1000))
            text += #"{"id":"\#(id)","recipient":"user-\#(id % recipients)","content":{"body":"\#(body)"},"trigger":{"at":"\#(at)"}}"#
        }
        text += "]}"
        guard let request = ControlRequest(fastJSON: Data(text.utf8)) else { fatalError("the request does not decode") }
        _ = state.onRequest(request, from: client, at: start)
    }
    let resident = residentBytes() - emptyResident
    #if canImport(Glibc)
    _ = glibcMallocTrim(0)
    #endif
    let trimmedResident = residentBytes() - emptyResident
    printHeapStatistics()
    print(String(format: "memory: %d reminders, %d recipients (%d held): resident +%.1f MB (%.0f B a reminder), +%.1f MB after malloc_trim (%.0f B)",
                 count, recipients, state.durable.reminderCount,
                 Double(resident) / 1e6, Double(resident) / Double(count),
                 Double(trimmedResident) / 1e6, Double(trimmedResident) / Double(count)))
    withExtendedLifetime(state) {}
}

/// glibc's `malloc_stats()`: the arenas' system and in-use bytes, on standard error.
func printHeapStatistics() {
    #if canImport(Glibc)
    glibcMallocStats()
    #endif
}

/// The process's resident size in bytes (`/proc/self/statm`, second field, in pages).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
