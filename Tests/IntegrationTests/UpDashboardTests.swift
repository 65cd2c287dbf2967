import ChimeRuntime
import ChimeTestSupport
import Foundation
import Testing

/// `chime up` runs the web dashboard beside the cluster (issue 29): at port base + 6 by
/// default, on `--dashboard HOST:PORT` when given, not with `--no-dashboard`; loopback only;
/// stopped with the cluster.
@Suite(.serialized) struct UpDashboardTests {
    @Test func upServesTheDashboardAtPortBasePlusSixAndStopsIt() throws {
        let cluster = try LocalCluster()
        defer { cluster.stop() }
        do {
            try Data("{}".utf8).write(to: URL(fileURLWithPath: cluster.directory.path("chime.json")))
            try cluster.spawn("up", ["up", "--workers", "1", "--no-samples", "--store", "none"] + cluster.clusterArguments)
            let port = cluster.portBase + 6
            try expectEventually(timeout: 30, "chime up to report its dashboard") {
                guard cluster.pid(of: "up") != nil else { throw DeadlineExceeded(what: "chime up exited:\n\(cluster.log(of: "up"))", seconds: 0) }
                return cluster.log(of: "up").contains("chime up: dashboard on http://127.0.0.1:\(port)/ (pid ")
            }
            var overview = ""
            try expectEventually(timeout: 15, "the dashboard's overview to show shard 0 active with 1 worker") {
                guard let reply = LoopbackHTTP.get(port: port, path: "/api/overview"), reply.status == 200 else { return false }
                overview = reply.body
                return reply.body.contains(#""phase":"active""#) && reply.body.contains(#""workersAlive":1"#)
            }
            #expect(overview.contains(#""shard":0"#), "\(overview)")
            let page = try #require(LoopbackHTTP.get(port: port, path: "/"))
            #expect(page.status == 200)
            #expect(page.body.contains("<title>"))
            let exit = cluster.stop("up")
            #expect(exit == ChildSupervisor.Exit(status: 0, isSignal: false), "\(String(describing: exit))")
            #expect(LoopbackHTTP.get(port: port, path: "/") == nil, "the dashboard outlived chime up")
        } catch {
            print(cluster.logs())
            throw error
        }
    }

    @Test func upRefusesANonLoopbackDashboardAndRunsWithoutOne() throws {
        let cluster = try LocalCluster()
        defer { cluster.stop() }
        try Data("{}".utf8).write(to: URL(fileURLWithPath: cluster.directory.path("chime.json")))
        let refused = try cluster.run(["up", "--no-samples", "--store", "none", "--dashboard", "0.0.0.0:\(cluster.portBase + 6)"])
        #expect(refused.status == 2)
        #expect(refused.error.contains("--dashboard 0.0.0.0:\(cluster.portBase + 6): give a loopback HOST:PORT"), "\(refused.error)")

        try cluster.spawn("up", ["up", "--workers", "1", "--no-samples", "--store", "none", "--no-dashboard"] + cluster.clusterArguments)
        try expectEventually(timeout: 30, "chime up to report its cluster") {
            guard cluster.pid(of: "up") != nil else { throw DeadlineExceeded(what: "chime up exited:\n\(cluster.log(of: "up"))", seconds: 0) }
            return cluster.log(of: "up").contains("Ctrl-C to stop")
        }
        #expect(!cluster.log(of: "up").contains("dashboard on"))
        #expect(LoopbackHTTP.get(port: cluster.portBase + 6, path: "/") == nil)
        _ = cluster.stop("up")
    }
}
