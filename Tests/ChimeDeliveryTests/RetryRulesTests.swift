import ChimeCore
import ChimeDelivery
import ChimeWire
import Foundation
import HTTPClient
import Testing

/// The pure rules of delivery: classification, back-off, the circuit, a destination's run.
@Suite struct RetryRulesTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_113_600)  // 2026-12-24T12:00:00Z
    static let hook = Destination.webhook(WebhookDestination(url: "https://example.com/hook", secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]))

    @Test(arguments: [
        (200, DeliveryResult.delivered(status: 200)),
        (204, .delivered(status: 204)),
        (410, .refused(status: 410, reason: "HTTP 410: gone", removesDestination: true)),
        (400, .refused(status: 400, reason: "HTTP 400: gone", removesDestination: false)),
        (404, .refused(status: 404, reason: "HTTP 404: gone", removesDestination: false)),
        (302, .refused(status: 302, reason: "HTTP 302: gone", removesDestination: false)),
        (408, .retry(status: 408, reason: "HTTP 408: gone", retryAfter: 7)),
        (429, .retry(status: 429, reason: "HTTP 429: gone", retryAfter: 7)),
        (500, .retry(status: 500, reason: "HTTP 500: gone", retryAfter: 7)),
        (503, .retry(status: 503, reason: "HTTP 503: gone", retryAfter: 7)),
    ])
    func aStatusIsClassifiedAsStandardWebhooksSays(status: Int, expected: DeliveryResult) {
        #expect(WebhookClassification.classify(status: status, body: Data(" gone\n".utf8), retryAfter: 7) == expected)
    }

    @Test func noAnswerIsRetriedButABadCertificateIsNot() {
        #expect(WebhookClassification.classify(HTTPClientError(.timedOut, "timed out")) == .retry(status: nil, reason: "timed out", retryAfter: nil))
        #expect(WebhookClassification.classify(HTTPClientError(.unreachable, "refused")) == .retry(status: nil, reason: "refused", retryAfter: nil))
        #expect(WebhookClassification.classify(HTTPClientError(.tls, "bad cert")) == .refused(status: nil, reason: "bad cert", removesDestination: false))
    }

    @Test func theBackOffDoublesUpToItsCapWithHalfOfItJittered() {
        let schedule = RetrySchedule(base: 0.5, cap: 4, maximumRetryAfter: 60, maximumAttempts: 10)
        #expect((1...6).map { schedule.backOff(afterAttempt: $0) } == [0.5, 1, 2, 4, 4, 4])
        #expect(schedule.delay(afterAttempt: 3, retryAfter: nil, unit: 0) == 1)
        #expect(schedule.delay(afterAttempt: 3, retryAfter: nil, unit: 0.5) == 1.5)
        #expect(schedule.delay(afterAttempt: 3, retryAfter: nil, unit: 0.999) < 2)
        #expect(schedule.delay(afterAttempt: 3, retryAfter: 9, unit: 0.5) == 9, "Retry-After wins")
        #expect(schedule.delay(afterAttempt: 3, retryAfter: 3600, unit: 0.5) == 60, "up to its bound")
        #expect(schedule.backOff(afterAttempt: 10_000) == 4, "no overflow")
    }

    @Test func aCircuitOpensAfterConsecutiveFailuresAndLetsOneTrialThroughLater() {
        var circuit = EndpointCircuit(threshold: 3, openSeconds: 10)
        var allowed: [Bool] = []
        for second in 0..<2 {
            allowed.append(circuit.allows(at: Double(second)))
            circuit.record(success: false, at: Double(second))
        }
        circuit.record(success: true, at: 2)
        for second in 3..<6 { circuit.record(success: false, at: Double(second)) }
        allowed.append(circuit.allows(at: 6))
        #expect(circuit.isOpen(at: 14.9))
        allowed.append(circuit.allows(at: 15))
        allowed.append(circuit.allows(at: 15.1))
        circuit.record(success: false, at: 16)
        allowed.append(circuit.allows(at: 25.9))
        allowed.append(circuit.allows(at: 26))
        circuit.record(success: true, at: 26)
        allowed.append(circuit.allows(at: 26.1))
        // Closed, closed; open; half-open trial; no second trial; open again; trial; closed.
        #expect(allowed == [true, true, false, true, false, false, true, true])
        #expect(circuit.failures == 0)
    }

    func run(attempts: Int = 3, deadline: Double = 100) -> DestinationRun {
        DestinationRun(
            destination: Self.hook, schedule: RetrySchedule(base: 1, cap: 8, maximumAttempts: attempts), deadline: deadline, worker: "w1")
    }

    @Test func aRunRetriesUntilItsAttemptsAreSpentAndKeepsEveryAttempt() {
        var run = run()
        let busy = DeliveryResult.retry(status: 503, reason: "HTTP 503: busy", retryAfter: nil)
        #expect(run.record(busy, at: Self.t0, monotonic: 0, unit: 0) == .retry(after: 0.5))
        #expect(run.record(busy, at: Self.t0, monotonic: 1, unit: 1) == .retry(after: 2))
        guard case .finished(let outcome) = run.record(busy, at: Self.t0, monotonic: 3, unit: 0) else {
            Issue.record("did not give up")
            return
        }
        #expect(outcome.outcome == .gaveUp && outcome.reason == "gave up after 3 attempts; last: HTTP 503: busy")
        #expect(outcome.attempts.map(\.number) == [1, 2, 3] && outcome.attempts.map(\.status) == [503, 503, 503])
        #expect(outcome.destination == "webhook:https://example.com/hook" && outcome.channel == "webhook")
    }

    @Test func aRunGivesUpRatherThanSendPastItsDeadline() {
        var run = run(attempts: 5, deadline: 10)
        let busy = DeliveryResult.retry(status: 429, reason: "HTTP 429", retryAfter: 30)
        guard case .finished(let outcome) = run.record(busy, at: Self.t0, monotonic: 1, unit: 0) else {
            Issue.record("scheduled a retry past the deadline")
            return
        }
        #expect(outcome.reason == "gave up after 1 attempts: the next (in 30.0 s) would pass the delivery deadline; last: HTTP 429")
        #expect(run.expiry(at: 9.9) == nil)
        #expect(run.expiry(at: 10)?.outcome == .gaveUp)
    }

    @Test func refusedAndGoneEndTheRunAtOnce() {
        var refused = run()
        let step = refused.record(.refused(status: 400, reason: "HTTP 400: no", removesDestination: false), at: Self.t0, monotonic: 0, unit: 0)
        #expect(step == .finished(DestinationOutcome(
                destination: Self.hook.redactedKey, channel: "webhook", outcome: .refused, reason: "HTTP 400: no",
                attempts: [DeliveryAttemptRecord(at: Self.t0, worker: "w1", number: 1, status: 400, error: "HTTP 400: no")])))
        var gone = run()
        guard case .finished(let outcome) = gone.record(.refused(status: 410, reason: "HTTP 410", removesDestination: true), at: Self.t0, monotonic: 0, unit: 0)
        else { return }
        #expect(outcome.outcome == .removed && !outcome.isFailure)
    }

    @Test func anAttemptHistoryIsBoundedInCountAndBytes() {
        let long = String(repeating: "é", count: 1000)
        let attempts = (1...20).map { DeliveryAttemptRecord(at: Self.t0, worker: "w1", number: $0, status: 500, error: long) }
        let outcome = DestinationOutcome(destination: "webhook:x", channel: "webhook", outcome: .gaveUp, reason: long, attempts: attempts)
        #expect(outcome.attempts.map(\.number) == Array(13...20))
        #expect(outcome.attempts.allSatisfy { ($0.error?.utf8.count ?? 0) <= DeliveryReport.maximumExcerptBytes })
        #expect(outcome.reason?.utf8.count == 255 && outcome.reason?.hasSuffix("…") == true)
        #expect(DeliveryReport.excerpt("a\nb\u{0}c") == "a b c")
    }

    @Test(arguments: [
        ("127.0.0.1", true), ("10.1.2.3", true), ("172.16.0.1", true), ("172.32.0.1", false), ("192.168.1.1", true),
        ("169.254.169.254", true), ("100.64.0.1", true), ("0.0.0.0", true), ("8.8.8.8", false), ("::1", true), ("::", true),
        ("fd00::1", true), ("fe80::1", true), ("::ffff:127.0.0.1", true), ("2001:db8::1", false), ("not an address", false),
    ])
    func privateAddressesAreTold(address: String, isPrivate: Bool) {
        #expect(PrivateAddresses.isPrivate(address) == isPrivate)
    }

    @Test func aWebhookOnLoopbackIsRefusedUnlessAllowed() {
        #expect(PrivateAddresses.refusal(of: "http://127.0.0.1:9/hook")?.contains("127.0.0.1") == true)
        #expect(PrivateAddresses.refusal(of: "http://localhost:9/hook") != nil)
        #expect(PrivateAddresses.refusal(of: "http://[::1]:9/hook") != nil)
        #expect(PrivateAddresses.refusal(of: "https://93.184.215.14/hook") == nil)
    }
}
