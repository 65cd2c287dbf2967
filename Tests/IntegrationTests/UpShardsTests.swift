import ChimeClient
import ChimeCore
import ChimeRuntime
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

/// `chime up --shards 3`: three coordinators on consecutive port blocks with their own stores,
/// workers serving all, events printed with their shard, a killed shard coordinator restarted.
@Suite(.serialized) struct UpShardsTests {
    @Test func upRunsThreeShardsAndRestartsAKilledOne() throws {
        let cluster = try LocalCluster(portCount: 3 * LocalCluster.portsPerShard)
        defer { cluster.stop() }
        do {
            try Data("{}".utf8).write(to: URL(fileURLWithPath: cluster.directory.path("chime.json")))
            try cluster.spawn("up", ["up", "--shards", "3", "--workers", "1", "--no-samples", "--json", "--store", "store"] + cluster.clusterArguments)
            try expectEventually(timeout: 30, "chime up to report its cluster") {
                guard cluster.pid(of: "up") != nil else { throw DeadlineExceeded(what: "chime up exited:\n\(cluster.log(of: "up"))", seconds: 0) }
                return cluster.log(of: "up").contains("Ctrl-C to stop")
            }
            let map = cluster.shardMap(shards: 3)
            let clients = try map.shards.map { try ControlClient(endpoint: $0.endpoints.control, timeout: .seconds(1), retries: 5) }
            var pids: [Int32] = []
            for shard in map.shards {
                let status = try #require(try clients[shard.id].send(ControlRequest(command: .status), expecting: StatusReport.self).result)
                #expect(status.shard == shard.id)
                #expect(status.mapEpoch == 1)
                pids.append(status.pid)
                #expect(FileManager.default.fileExists(atPath: cluster.directory.path("store/shard-\(shard.id)")))
            }

            // Each shard's events are printed with its id (retried: the first may beat a subscription).
            for shard in map.shards {
                let recipient = ShardedClusterTests.recipient(on: shard.id, of: map, prefix: "up")
                var attempt = 0
                try expectEventually(timeout: 20, interval: 0.1, "a fire event of shard \(shard.id)") {
                    if cluster.log(of: "up").contains(#""recipient":"\#(recipient.rawValue)","reminderId":"#) {
                        return cluster.log(of: "up").components(separatedBy: "\n")
                            .contains { $0.contains(#""recipient":"\#(recipient.rawValue)""#) && $0.contains(#""shard":\#(shard.id),"#) }
                    }
                    attempt += 1
                    if attempt % 10 == 1 {
                        let reminder = Reminder(
                            id: ReminderID("up-\(attempt)"), recipient: recipient, content: Content(body: "up"), trigger: Trigger(start: .instant(Date())))
                        _ = try clients[shard.id].send(ControlRequest(command: .schedule([reminder])), expecting: ScheduleResult.self)
                    }
                    return false
                }
            }

            kill(pids[2], SIGKILL)
            try expectEventually(timeout: 20, interval: 0.1, "chime up to restart shard 2's coordinator") {
                let status = try? clients[2].send(ControlRequest(command: .status), expecting: StatusReport.self).result
                return status.map { $0.pid != pids[2] && $0.shard == 2 } ?? false
            }
            for shard in [0, 1] {
                #expect(try clients[shard].send(ControlRequest(command: .status), expecting: StatusReport.self).result?.pid == pids[shard])
            }
        } catch {
            cluster.stop()
            print("chime up --shards failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }
    /// Workers are watched through every shard: with shard 0's coordinator stopped (and then
    /// restarted, knowing nothing of the worker), a stopped worker is still found not alive by
    /// shard 1, killed and replaced.
    @Test func upReplacesAStoppedWorkerThroughAnyShard() throws {
        let cluster = try LocalCluster(portCount: 2 * LocalCluster.portsPerShard)
        defer { cluster.stop() }
        do {
            try Data("{}".utf8).write(to: URL(fileURLWithPath: cluster.directory.path("chime.json")))
            try cluster.spawn("up", ["up", "--shards", "2", "--workers", "1", "--no-samples", "--store", "store"] + cluster.clusterArguments)
            try expectEventually(timeout: 30, "chime up to report its cluster") {
                guard cluster.pid(of: "up") != nil else { throw DeadlineExceeded(what: "chime up exited:\n\(cluster.log(of: "up"))", seconds: 0) }
                return cluster.log(of: "up").contains("Ctrl-C to stop")
            }
            let map = cluster.shardMap(shards: 2)
            let clients = try map.shards.map { try ControlClient(endpoint: $0.endpoints.control, timeout: .seconds(1), retries: 0) }
            func worker(on shard: Int) -> WorkerReport? {
                (try? clients[shard].send(ControlRequest(command: .workers), expecting: WorkersResult.self).result)?
                    .workers.first { $0.id == "worker-1" }
            }
            let coordinator0 = try #require(try clients[0].send(ControlRequest(command: .status), expecting: StatusReport.self).result?.pid)
            let old = try #require(worker(on: 1)?.pid)
            kill(coordinator0, SIGSTOP)
            kill(old, SIGSTOP)
            defer { kill(old, SIGCONT) }
            try expectEventually(timeout: 30, interval: 0.1, "a new worker-1 alive on shard 1") {
                worker(on: 1).map { $0.pid != old && $0.alive } ?? false
            }
            let line = cluster.log(of: "up").components(separatedBy: "\n")
                .first { $0.contains("chime up: worker-1 (pid \(old)) is running but not alive for shard(s) ") }
            #expect(line?.hasSuffix("1; killing it") == true, "\(line ?? "no kill line in:\n\(cluster.log(of: "up"))")")
            try expectEventually(timeout: 30, interval: 0.1, "the new worker-1 alive on shard 0 (restarted)") {
                worker(on: 0).map { $0.pid != old && $0.alive } ?? false
            }
        } catch {
            cluster.stop()
            print("chime up --shards failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }
}
