import ChimeClient
import ChimeRuntime
import ChimeWire
import Foundation

/// The bounded waits, the stops and kills, and what the bench reads from the files.
extension BenchCluster {
    /// Polls `ping` on every shard until each answers.
    /// - Returns: when the last shard answered, epoch seconds.
    /// - Throws: `BenchError` when a shard does not answer within `timeout` seconds or a child exits.
    public func waitUntilAnswering(timeout: Double) throws -> Double {
        try coordinators.indices.map { try waitUntilAnswering(shard: $0, timeout: timeout) }.max() ?? 0
    }

    /// Polls `ping` on shard `index` (a fresh 50 ms attempt at a time) until it answers.
    /// - Returns: when it answered, epoch seconds.
    /// - Throws: `BenchError` when it does not answer within `timeout` seconds or a child exits.
    public func waitUntilAnswering(shard index: Int, timeout: Double) throws -> Double {
        let client = try ControlClient(
            endpoint: controlEndpoints[index], timeout: .milliseconds(50), retries: 0, curve: operatorKeys)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try? client.send(ControlRequest(command: .ping), expecting: PongResult.self)) != nil {
                return Date().timeIntervalSince1970
            }
            try checkAlive()
            if stopSignal?.isStopRequested == true { throw BenchError("interrupted") }
        }
        let which = map == nil ? "the coordinator" : "shard \(index)'s coordinator"
        throw BenchError("\(which) did not answer ping within \(timeout) s\n\(logTail())")
    }

    /// Waits until every worker is alive in every shard's `workers` view.
    /// - Throws: `BenchError` after `timeout` seconds (for all shards together) or when a child exits.
    public func waitForWorkers(timeout: Double) throws {
        let deadline = Date().addingTimeInterval(timeout)
        for (index, endpoint) in controlEndpoints.enumerated() {
            let client = try ControlClient(endpoint: endpoint, timeout: .milliseconds(500), retries: 0, curve: operatorKeys)
            while true {
                let reply = try? client.send(ControlRequest(command: .workers), expecting: WorkersResult.self)
                if (reply?.result?.workers.filter(\.alive).count ?? 0) >= workerCount { break }
                try checkAlive()
                if stopSignal?.isStopRequested == true { throw BenchError("interrupted") }
                if Date() >= deadline {
                    throw BenchError("\(workerCount) workers were not alive on shard \(index) within \(timeout) s\n\(logTail())")
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }

    /// SIGKILL to every coordinator and every worker, each by pid, back to back; waits for them.
    /// - Returns: when the first signal was sent, epoch seconds.
    public func killAll() -> Double {
        let killedAt = Date().timeIntervalSince1970
        let children = children
        for child in children { child.signal(SIGKILL) }
        for child in children { child.kill() }
        return killedAt
    }

    /// SIGTERM to every coordinator at once, SIGKILL after `grace` seconds.
    /// - Returns: whether all exited within the grace period.
    @discardableResult
    public func stopCoordinator(grace: Double = 30) -> Bool {
        let running = coordinators.compactMap { $0 }
        return !ChildSupervisor.stop(running, grace: grace).contains { $0?.neededKill == true }
    }

    /// SIGTERM to shard `index`'s coordinator, SIGKILL after `grace` seconds.
    /// - Returns: whether it exited within the grace period.
    @discardableResult
    public func stopCoordinator(shard index: Int, grace: Double = 30) -> Bool {
        guard let coordinator = coordinators[index] else { return true }
        return coordinator.stop(grace: grace)?.neededKill != true
    }

    /// Stops every child at once: SIGTERM, then SIGKILL after 5 s.
    public func stop() {
        ChildSupervisor.stop(children, grace: 5)
    }

    /// Bytes of every file under the store directory (every shard's).
    public func storeBytes() -> Int {
        guard let files = FileManager.default.enumerator(at: storeDirectory, includingPropertiesForKeys: [.fileSizeKey])
        else { return 0 }
        var total = 0
        for case let url as URL in files {
            total += (try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
        }
        return total
    }

    /// Throws when a child has exited.
    func checkAlive() throws {
        for child in children where !child.isRunning {
            throw BenchError("\(child.name) exited (\(child.exit.map { "\($0)" } ?? "?"))\n\(logTail())")
        }
    }

    /// The last lines of every child's log.
    public func logTail(lines: Int = 20) -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".log") }.sorted().map { name in
            let text = (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? ""
            let tail = text.split(separator: "\n").suffix(lines).joined(separator: "\n")
            return "== \(name)\n\(tail)"
        }.joined(separator: "\n")
    }
}
