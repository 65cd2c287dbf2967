import ChimeRuntime
import Foundation
import Testing
@testable import ChimeWorker

@Suite struct WorkerProbeDeliveryTests {
    @Test func deliveriesAreCountedByChannelAndOutcomeWithTheirLatency() {
        let probe = WorkerProbe()
        let idle = String(decoding: probe.metricsResponse().body, as: UTF8.self)
        // Served from the start: 3 channels × 6 outcomes at zero, and an empty histogram.
        #expect(idle.components(separatedBy: "\n").filter { $0.hasPrefix("chime_deliveries_total{") && $0.hasSuffix("} 0") }.count == 18)
        #expect(idle.contains("chime_deliveries_total{channel=\"apns\",outcome=\"refused\"} 0\n"))
        #expect(idle.contains("chime_delivery_attempt_seconds_count 0\n"))
        probe.noteDelivery(channel: "webhook", outcome: "retry", seconds: 0.02)
        probe.noteDelivery(channel: "webhook", outcome: "delivered", seconds: 0.03)
        probe.noteDelivery(channel: "webhook", outcome: "gave_up", seconds: nil)
        let text = String(decoding: probe.metricsResponse().body, as: UTF8.self)
        #expect(text.contains("chime_deliveries_total{channel=\"webhook\",outcome=\"delivered\"} 1\n"))
        #expect(text.contains("chime_deliveries_total{channel=\"webhook\",outcome=\"gave_up\"} 1\n"))
        #expect(text.contains("chime_deliveries_total{channel=\"webhook\",outcome=\"retry\"} 1\n"))
        #expect(text.contains("chime_delivery_attempt_seconds_count 2\n"))
        #expect(text.contains("chime_deliveries_total{channel=\"webhook\",outcome=\"refused\"} 0\n"))
    }

    @Test func aTurnPublishesRedeliveriesNotResentAndFiringsAwaitingDestinations() {
        let probe = WorkerProbe()
        let idle = String(decoding: probe.metricsResponse().body, as: UTF8.self)
        #expect(idle.contains("chime_worker_redeliveries_not_resent_total 0\n"))
        #expect(idle.contains("chime_worker_firings_awaiting_destinations 0\n"))
        probe.noteTurn(at: .now, delivered: 40, notResent: 3, awaiting: 7)
        let text = String(decoding: probe.metricsResponse().body, as: UTF8.self)
        #expect(text.contains("chime_worker_firings_delivered_total 40\n"))
        #expect(text.contains("chime_worker_redeliveries_not_resent_total 3\n"))
        #expect(text.contains("chime_worker_firings_awaiting_destinations 7\n"))
    }

    /// A worker serving several shards (issue 39): the process's probe adds up its members'
    /// loops, and keeps a released member's counts.
    @Test func theProcessProbeAddsUpItsShardsLoops() {
        let process = WorkerProbe()
        let shard0 = WorkerProbe()
        let shard1 = WorkerProbe()
        process.adopt(shard0)
        process.adopt(shard1)
        #expect(process.readiness().status == 503)
        shard0.noteTurn(at: .now, delivered: 10, notResent: 1, awaiting: 2)
        shard1.noteTurn(at: .now, delivered: 5, notResent: 0, awaiting: 3)
        shard1.noteTakingFirings()
        #expect(process.readiness().status == 200)
        #expect(process.health().status == 200)
        var text = String(decoding: process.metricsResponse().body, as: UTF8.self)
        #expect(text.contains("chime_worker_firings_delivered_total 15\n"))
        #expect(text.contains("chime_worker_redeliveries_not_resent_total 1\n"))
        #expect(text.contains("chime_worker_firings_awaiting_destinations 5\n"))
        // A loop stuck past the health window makes the process unhealthy.
        #expect(process.health(at: .now + .seconds(HealthWindow.seconds + 1)).status == 503)
        process.release(shard1)
        process.release(shard1)
        text = String(decoding: process.metricsResponse().body, as: UTF8.self)
        #expect(text.contains("chime_worker_firings_delivered_total 15\n"), "a released shard's deliveries stay counted, once")
        #expect(text.contains("chime_worker_firings_awaiting_destinations 2\n"))
    }
}

