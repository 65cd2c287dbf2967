import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Synchronization
import Testing
import ChimeClient

/// Issue 15, item 1, for snapshots: a snapshot of a big store is written on the snapshot
/// thread, so pings every 50 ms answer within 100 ms and reminders due meanwhile fire on time
/// while nine snapshots and a compaction run back to back; then a `kill -9` and a restart recover
/// every reminder from the newest snapshot. 30,000 reminders in the normal run; 300,000 with
/// `CHIME_LONG_TESTS=1`.
@Suite(.serialized) struct SnapshotLoadTests {
    @Test func snapshotsOfABigStoreKeepPingsAndFiringsOnTime() throws {
        let isLong = ProcessInfo.processInfo.environment["CHIME_LONG_TESTS"] == "1"
        let count = isLong ? 300_000 : 30_000
        try withLocalCluster(workers: 1, configuration: PagingLoadTests.configuration) { cluster in
            let client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(60), retries: 0)
            try PagingLoadTests.fill(client, count: count)
            let collector = EventCollector(endpoint: cluster.eventsEndpoint, recipient: "due")
            defer { collector.close() }
            let probeCollector = EventCollector(endpoint: cluster.eventsEndpoint)
            try ClusterDeliveryTests.waitUntilSubscribed(probeCollector, client: client, recipient: "probe")
            probeCollector.close()

            // One reminder due every 100 ms over a window longer than the snapshots take.
            let window = isLong ? 120.0 : 40.0
            let due = PagingLoadTests.dueEvery100Milliseconds(for: window)
            _ = try client.send(ControlRequest(command: .schedule(due)), expecting: ScheduleResult.self)

            let pinger = PagingLoadTests.Pinger(endpoint: cluster.controlEndpoint)
            let started = Date()
            var snapshotMilliseconds: [Double] = []
            for operation in Array(repeating: ControlRequest.Command.snapshot, count: 9) + [.compact] {
                let report = try #require(client.send(ControlRequest(command: operation), expecting: StoreReport.self).result)
                snapshotMilliseconds.append(try #require(report.snapshotMilliseconds))
            }
            let ended = Date()
            let pings = pinger.stop()

            let duringSnapshots = due.filter {
                guard case .instant(let instant) = $0.trigger.start else { return false }
                return instant > started && instant.addingTimeInterval(0.001) < ended
            }
            try expectEventually(timeout: 10, "the reminders due during the snapshots fired") {
                Set(collector.received.map(\.firing.reminderId)).isSuperset(of: duringSnapshots.map(\.id))
            }
            let wanted = Set(duringSnapshots.map(\.id))
            let lateness = collector.received.filter { wanted.contains($0.firing.reminderId) }
                .map { $0.firedAt.timeIntervalSince($0.firing.dueAt) * 1000 }.sorted()
            let roundTrips = pings.roundTrips.sorted()
            print(String(
                format: "snapshot load: %d reminders; 10 snapshots of %@ ms in %.2f s; %d pings: p50 %.2f ms, max %.2f ms, %d failed; %d due meanwhile fired: max %.2f ms late",
                count + due.count, snapshotMilliseconds.map { String(format: "%.0f", $0) }.joined(separator: "/"),
                ended.timeIntervalSince(started), roundTrips.count, roundTrips.isEmpty ? .nan : roundTrips[roundTrips.count / 2],
                roundTrips.last ?? .nan, pings.failures.count, lateness.count, lateness.last ?? .nan))
            #expect(pings.failures.isEmpty, "\(pings.failures)")
            #expect(roundTrips.count >= 5)
            #expect(lateness.count == duringSnapshots.count && !duringSnapshots.isEmpty)
            // Before the snapshot thread, each snapshot held the loop for its whole duration
            // (hundreds of ms here, back to back), and every ping and firing meanwhile waited
            // for it: the median ping took hundreds of ms. The long form holds the issue's
            // bounds (ping ≤ 100 ms, firing ≤ 20 ms late). The short form runs in CI's debug
            // build beside other suites on 2 cores, where one CI run saw a single ping wait
            // 339 ms and a firing 235 ms for a core (p50 1.4 ms) while snapshots took 538–889 ms:
            // it bounds the medians by 20 ms and the worst by a second.
            if isLong {
                #expect((roundTrips.last ?? 0) <= 100)
                #expect((lateness.last ?? 0) <= 20)
            } else {
                #expect(PagingLoadTests.percentile(roundTrips, 0.5) <= 20)
                #expect(PagingLoadTests.percentile(lateness, 0.5) <= 20)
                #expect((roundTrips.last ?? 0) <= 1000)
                #expect((lateness.last ?? 0) <= 1000)
            }
            #expect(cluster.log(of: "coordinator").components(separatedBy: "snapshot written").count - 1 == 10)

            // The newest snapshot (and the journal after it) holds every reminder.
            let pending = try #require(
                client.send(ControlRequest(command: .status), expecting: StatusReport.self).result?.reminders.values.reduce(0, +))
            cluster.crash("coordinator")
            try cluster.restart("coordinator")
            _ = try cluster.waitForCoordinator(timeout: 60)
            let recovered = try #require(
                client.send(ControlRequest(command: .status), expecting: StatusReport.self).result?.reminders.values.reduce(0, +))
            #expect(recovered == pending)
            // The subscription probes' reminders come on top.
            #expect(recovered >= count + due.count)
        }
    }

    /// SIGTERM while the snapshot thread writes: the coordinator finishes the snapshot, answers
    /// the request that asked for it, exits 0, and the next start recovers from that snapshot.
    @Test func aStopWhileASnapshotIsWrittenFinishesItAndAnswers() throws {
        try withLocalCluster(workers: 0, configuration: PagingLoadTests.configuration) { cluster in
            let client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(60), retries: 0)
            try PagingLoadTests.fill(client, count: 40_000)
            let snapshots = cluster.directory.url.appendingPathComponent(".chime/store/snapshot")
            let reply = Mutex<Result<StoreReport?, any Error>?>(nil)
            let endpoint = cluster.controlEndpoint
            let requester = Thread {
                let outcome = Result {
                    try ControlClient(endpoint: endpoint, timeout: .seconds(60), retries: 0)
                        .send(ControlRequest(command: .snapshot), expecting: StoreReport.self).result
                }
                reply.withLock { $0 = outcome }
            }
            requester.start()
            // The snapshot thread has its temp file open: the stop comes in the middle of it.
            try expectEventually(timeout: 30, interval: 0.002, "the snapshot's temp file appeared") {
                ((try? FileManager.default.contentsOfDirectory(atPath: snapshots.path)) ?? []).contains { $0.hasSuffix(".tmp") }
            }
            // What is checked is that the stop waits for the snapshot, not how fast a debug
            // build writes 40,000 reminders: on a loaded machine (load 17) that took over the
            // default 5 s grace and the coordinator was killed.
            let exit = cluster.stop("coordinator", grace: 60)
            #expect(exit?.status == 0 && exit?.isSignal == false && exit?.neededKill == false, "\(String(describing: exit))")
            try expectEventually(timeout: 30, "the snapshot request was answered") { reply.withLock { $0 != nil } }
            let report = try #require(try reply.withLock { try $0?.get() })
            #expect(report.snapshotMilliseconds != nil)
            let names = try FileManager.default.contentsOfDirectory(atPath: snapshots.path)
            #expect(names.filter { $0.hasSuffix(".tmp") }.isEmpty, "\(names)")
            #expect(names.count == 1, "\(names)")

            try cluster.restart("coordinator")
            _ = try cluster.waitForCoordinator(timeout: 60)
            let recovered = try #require(
                client.send(ControlRequest(command: .status), expecting: StatusReport.self).result?.reminders.values.reduce(0, +))
            #expect(recovered == 40_000)
            #expect(cluster.log(of: "coordinator").contains("snapshotSequence"))
        }
    }
}
