import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator


/// What one page costs the coordinator's loop thread, by phase (issue 15: no op holds the
/// loop). Measured only with `CHIME_PAGING_COST=N` (N reminders, e.g. 100000); figures printed.
@Suite struct PagingCostTests {
    static let count = ProcessInfo.processInfo.environment["CHIME_PAGING_COST"].flatMap(Int.init)

    static func milliseconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    }

    @Test(.enabled(if: count != nil)) func printsWhatAPageCostsByPhase() throws {
        let count = try #require(Self.count)
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 3600
        let t0 = Date(timeIntervalSince1970: 1_798_099_200)
        var state = CoordinatorState(configuration: configuration, startedAt: t0)
        let client = ClientAddress(routing: [Data([1])])
        let filling = ContinuousClock.now
        for start in stride(from: 0, to: count, by: 1000) {
            let reminders = (start..<min(start + 1000, count)).map { index in
                Reminder(
                    id: ReminderID(String(format: "bulk-%07d", index)), recipient: "bulk", content: Content(body: "b"),
                    trigger: Trigger(start: .instant(t0.addingTimeInterval(86_400))))
            }
            _ = state.onRequest(ControlRequest(command: .schedule(reminders)), from: client, at: t0)
        }
        print("paging cost: \(count) scheduled in \(String(format: "%.0f", Self.milliseconds(since: filling))) ms")
        for limit in [250, 1000] {
            var cursor: PageCursor?
            var finding: [Double] = []
            var decoding: [Double] = []
            var encoding: [Double] = []
            var requests: [Double] = []
            for _ in 0..<20 {
                var started = ContinuousClock.now
                let outcome = state.list(ReminderFilter(), includeInactive: true, limit: limit, cursor: cursor, at: t0)
                finding.append(Self.milliseconds(since: started))
                guard case .listed(let page) = outcome else { break }
                started = ContinuousClock.now
                let result = page.result
                decoding.append(Self.milliseconds(since: started))
                started = ContinuousClock.now
                let body = WireCodec().encode(ControlReply(requestId: nil, result: result))
                encoding.append(Self.milliseconds(since: started))
                #expect(body.count > limit * 50)
                started = ContinuousClock.now
                _ = state.onRequest(
                    ControlRequest(command: .list(ReminderFilter(), all: true, limit: limit, cursor: cursor)), from: client, at: t0)
                requests.append(Self.milliseconds(since: started))
                guard let next = page.nextCursor else { break }
                cursor = try PageCursor(text: next, expecting: .list)
            }
            func median(_ values: [Double]) -> String { String(format: "%.2f", values.sorted()[values.count / 2]) }
            print("paging cost: \(count) reminders, page \(limit): find \(median(finding)) ms (the loop's part), decode \(median(decoding)) ms, encode \(median(encoding)) ms, onRequest \(median(requests)) ms (medians of \(finding.count))")
        }
        var started = ContinuousClock.now
        _ = state.status(at: t0)
        print("paging cost: status \(String(format: "%.2f", Self.milliseconds(since: started))) ms")
        for index in 0..<100_000 {
            state.counters.dispatchLateness.record(milliseconds: Double(index % 997) / 7)
            state.counters.fireLateness.record(milliseconds: Double(index % 991) / 3)
        }
        started = ContinuousClock.now
        _ = state.onRequest(ControlRequest(command: .stats), from: client, at: t0)
        print("paging cost: stats with 100,000 lateness samples each \(String(format: "%.2f", Self.milliseconds(since: started))) ms")
        var directives: [CoordinatorDirective] = []
        var slices: [Double] = []
        started = ContinuousClock.now
        let finished = state.startCancel(ReminderFilter(recipient: "bulk"), requestId: "c", from: client, at: t0, directives: &directives)
        slices.append(Self.milliseconds(since: started))
        #expect(finished == nil)
        while !state.bulkCancels.isEmpty {
            started = ContinuousClock.now
            state.continueBulkCancel(at: t0, directives: &directives)
            slices.append(Self.milliseconds(since: started))
        }
        #expect(state.reminderCount == 0)
        let sorted = slices.sorted()
        print(String(
            format: "paging cost: cancel by recipient of %d in %d slices of %d: median %.2f ms, max %.2f ms, total %.0f ms",
            count, slices.count, CoordinatorState.cancelSlice, sorted[sorted.count / 2], sorted.last ?? 0, slices.reduce(0, +)))
    }
}
