import ChimeClient
import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

/// Issue 42: a second `chime up` beside a running one is refused before it starts anything:
/// the same store names the holder's pid, another store names the first busy port.
@Suite(.serialized) struct UpRefusalTests {
    @Test func aSecondUpIsRefusedBeforeItStartsAnything() throws {
        let cluster = try LocalCluster()
        defer { cluster.stop() }
        do {
            try Data("{}".utf8).write(to: URL(fileURLWithPath: cluster.directory.path("chime.json")))
            try cluster.spawn("up", ["up", "--workers", "1", "--no-samples", "--no-dashboard", "--store", "store"] + cluster.clusterArguments)
            try expectEventually(timeout: 30, "chime up to report its cluster") {
                guard cluster.pid(of: "up") != nil else { throw DeadlineExceeded(what: "chime up exited:\n\(cluster.log(of: "up"))", seconds: 0) }
                return cluster.log(of: "up").contains("Ctrl-C to stop")
            }
            let client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(1), retries: 5)
            let coordinatorPid = try #require(try client.send(ControlRequest(command: .status), expecting: StatusReport.self).result).pid

            let store = cluster.directory.path("store")
            let started = Date()
            let sameStore = try LocalCluster.run(
                binary: cluster.binary, ["up", "--workers", "1", "--store", store] + cluster.clusterArguments, timeout: 20)
            let seconds = Date().timeIntervalSince(started)
            print(String(format: "a second chime up was refused after %.2f s", seconds))
            #expect(sameStore.status == 1)
            #expect(sameStore.output.isEmpty, "\(sameStore.output)")
            #expect(sameStore.error == "chime: already running (pid \(coordinatorPid)): the store \(store) is locked; stop that cluster first, or give another --store and --port-base\n")
            #expect(seconds < 5)

            let other = try TemporaryDirectory()
            let otherStore = try LocalCluster.run(
                binary: cluster.binary, ["up", "--workers", "1", "--store", other.path("store")] + cluster.clusterArguments, timeout: 20)
            #expect(otherStore.status == 1)
            #expect(otherStore.error == "chime: already running: 127.0.0.1:\(cluster.portBase) (control) is in use; stop what listens there, or give another --port-base\n")
            #expect(!FileManager.default.fileExists(atPath: other.path("store")), "nothing was started, not even a store")

            // The running cluster saw nothing of either: still its one worker, no reminder.
            let workers = try #require(try client.send(ControlRequest(command: .workers), expecting: WorkersResult.self).result)
            #expect(workers.workers.map(\.id) == ["worker-1"])
            let status = try #require(try client.send(ControlRequest(command: .status), expecting: StatusReport.self).result)
            #expect(status.pid == coordinatorPid)
            #expect(status.reminders.values.reduce(0, +) == 0)
            #expect(cluster.pid(of: "up") != nil)
        } catch {
            print("chime up log:\n\(cluster.log(of: "up"))")
            throw error
        }
    }
}
