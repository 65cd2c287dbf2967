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
}
