import ChimeClient
import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing
import ZeroMQ

/// Figures, not a timed test (`CHIME_FIGURES=1`): what a CLI-like call costs against one
/// coordinator — a fresh `ClusterClient` sending one routed request — with the map asked for
/// first (as before: two round trips) and without (now: one), plus a cached client.
@Suite(.serialized) struct RoutedCallFigures {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["CHIME_FIGURES"] == "1"))
    func oneRoutedCallCostsOneRoundTrip() throws {
        try withLocalCluster(workers: 0) { cluster in
            let context = try Context()
            defer { context.shutdown() }
            let request = ControlRequest(command: .list(ReminderFilter(recipient: "alice"), all: false, limit: 1, cursor: nil))
            func median(_ calls: Int, _ body: () throws -> Void) throws -> Double {
                var samples: [Double] = []
                for _ in 0..<calls {
                    let start = ContinuousClock.now
                    try body()
                    let elapsed = (ContinuousClock.now - start).components
                    samples.append(Double(elapsed.seconds) * 1e6 + Double(elapsed.attoseconds) / 1e12)
                }
                return samples.sorted()[calls / 2]
            }
            func fresh() throws -> ClusterClient {
                try ClusterClient(seeds: [cluster.controlEndpoint], timeout: .seconds(5), retries: 0, context: context)
            }
            // Warm-up: connections, caches.
            _ = try median(100) { _ = try fresh().send(request, expecting: ListResult.self) }
            let before = try median(1000) {
                let client = try fresh()
                try client.refreshMap()
                _ = try client.send(request, expecting: ListResult.self)
            }
            let after = try median(1000) { _ = try fresh().send(request, expecting: ListResult.self) }
            let cached = try fresh()
            let steady = try median(1000) { _ = try cached.send(request, expecting: ListResult.self) }
            print(String(
                format: "routed call, fresh ClusterClient, median of 1000: map first %.0f µs, direct %.0f µs; cached client %.0f µs",
                before, after, steady))
            #expect(after < before)
        }
    }
}
