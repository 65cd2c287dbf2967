import ChimeClient
import ChimeCore
import ChimeWire
import Foundation

extension BenchRunner {
    /// Schedules the plan, each reminder on its recipient's shard, and fills the ingest figures.
    func ingest(_ plan: WorkloadPlan, cluster: BenchCluster, into report: inout BenchReport) throws {
        let body = settings.workload == .w4 ? Self.hundredByteBody : nil
        let names = settings.recipientNames
        let shape = Ingestor.ReminderShape(
            recipient: { id in names[id % names.count] },
            content: { _ in body.map { #"{"body":"\#($0)"}"# } ?? "{}" }, spread: settings.spread)
        let lanes: [[Int]]
        if let map = cluster.map {
            lanes = try BenchShardLayout.partition(count: plan.count, recipients: names, map: map)
            report.remindersPerShard = lanes.map(\.count)
        } else {
            lanes = [Array(0..<plan.count)]
        }
        let ingestor = try Ingestor(endpoints: cluster.controlEndpoints, curve: cluster.operatorKeys)
        let (seconds, requests) = try ingestor.schedule(
            lanes: lanes, dues: plan.dues, shape: shape, batch: settings.batch, pipeline: settings.pipeline, stop: stop)
        report.ingestSeconds = seconds
        report.ingestRate = Double(plan.count) / seconds
        report.ingestRequests = requests
        note(String(format: "ingested %d in %.3f s (%.0f/s, %d requests)", plan.count, seconds, Double(plan.count) / seconds, requests))
    }

    /// The 100-byte body of W4's reminders.
    static let hundredByteBody = String(repeating: "Chime benchmark body. ", count: 5).prefix(100).description

    /// Warm-up: probe reminders due at once, one per worker and shard, must reach the
    /// subscriber (the subscriptions have then travelled through the forwarders to the
    /// publishers); 1 s more. Each round sends one probe to each shard, to a recipient of its
    /// slots.
    /// - Returns: how many probes were scheduled.
    @discardableResult
    func warmUp(_ cluster: BenchCluster, _ subscriber: BenchSubscriber) throws -> Int {
        let recipients = try cluster.map.map { try BenchShardLayout.recipients(onEachShardOf: $0, prefix: "bench-warmup") }
            ?? ["bench-warmup"]
        let clients = try cluster.controlEndpoints.map { endpoint in
            try ControlClient(endpoint: endpoint, timeout: .seconds(5), retries: 0, curve: cluster.operatorKeys)
        }
        let wanted = settings.workers * clients.count
        let deadline = Date().addingTimeInterval(15)
        var sent = 0
        while subscriber.progress.probes < wanted && Date() < deadline {
            let at = RFC3339.format(Date())
            for (client, recipient) in zip(clients, recipients) {
                let probe = """
                    {"op":"schedule","reminder":{"id":"warmup-\(sent)","recipient":"\(recipient)","trigger":{"at":"\(at)"}}}
                    """
                _ = try client.exchange(Data(probe.utf8))
                sent += 1
            }
            try sleep(until: Date().timeIntervalSince1970 + 0.2)
        }
        if subscriber.progress.probes == 0 { throw BenchError("no warm-up probe reached the subscriber in 15 s\n\(cluster.logTail())") }
        try sleep(until: Date().timeIntervalSince1970 + 1)
        return sent
    }
}
