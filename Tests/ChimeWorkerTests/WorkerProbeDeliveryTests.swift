import Foundation
import Testing
@testable import ChimeWorker

@Suite struct WorkerProbeDeliveryTests {
    @Test func deliveriesAreCountedByChannelAndOutcomeWithTheirLatency() {
        let probe = WorkerProbe()
        #expect(!String(decoding: probe.metricsResponse().body, as: UTF8.self).contains("chime_deliveries_total"))
        probe.noteDelivery(channel: "webhook", outcome: "retry", seconds: 0.02)
        probe.noteDelivery(channel: "webhook", outcome: "delivered", seconds: 0.03)
        probe.noteDelivery(channel: "webhook", outcome: "gave_up", seconds: nil)
        let text = String(decoding: probe.metricsResponse().body, as: UTF8.self)
        #expect(text.contains("chime_deliveries_total{channel=\"webhook\",outcome=\"delivered\"} 1\n"))
        #expect(text.contains("chime_deliveries_total{channel=\"webhook\",outcome=\"gave_up\"} 1\n"))
        #expect(text.contains("chime_deliveries_total{channel=\"webhook\",outcome=\"retry\"} 1\n"))
        #expect(text.contains("chime_delivery_attempt_seconds_count 2\n"))
    }
}
