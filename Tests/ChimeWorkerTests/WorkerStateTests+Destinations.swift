import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeWorker

/// A firing whose recipient has destinations: published at once, acknowledged only with its
/// delivery report.
@Suite struct WorkerStateDestinationTests {
    static let t0 = WorkerStateTests.t0
    static let m0 = WorkerStateTests.m0
    static let hook = Destination.webhook(WebhookDestination(url: "https://example.com/hook", secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]))

    func firing(_ id: String, for recipient: RecipientID, dueAt: Date = t0) -> Firing {
        Firing(reminderId: ReminderID(id), recipient: recipient, dueAt: dueAt, content: Content(body: id))
    }

    @Test func theAcknowledgementWaitsForTheDeliveryReport() throws {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        let batch = DispatchBatch(
            epoch: 1, leaseMilliseconds: 5_000, firings: [firing("a", for: "alice"), firing("b", for: "bob")],
            destinations: ["alice": [Self.hook]])
        let directives = state.onBatch(batch, at: Self.t0)
        #expect(directives.count == 3)
        guard case .publish(let event) = directives[0], case .deliverToDestinations(let same, let destinations, let budget) = directives[1],
            case .publish = directives[2]
        else {
            Issue.record("\(directives)")
            return
        }
        #expect(same == event && destinations == [Self.hook] && budget == 4)
        guard case .report(let first)? = state.onTick(monotonic: Self.m0).last else { return }
        #expect(first.acks.map(\.firingId.key.id) == ["b"] && first.deliveries == nil)
        #expect(state.awaitingDestinationsCount == 1)
        let outcome = DestinationOutcome(
            destination: Self.hook.redactedKey, channel: "webhook", outcome: .delivered, reason: nil,
            attempts: [DeliveryAttemptRecord(at: Self.t0, worker: "w1", number: 1, status: 200, error: nil)])
        let report = DeliveryReport(firingId: event.firing.firingId, outcomes: [outcome])
        state.onDeliveryReport(report, monotonic: Self.m0 + 0.1)
        state.onDeliveryReport(report, monotonic: Self.m0 + 0.1)
        guard case .report(let second)? = state.onTick(monotonic: Self.m0 + 0.2).last else { return }
        #expect(second.acks.map(\.firingId.key.id) == ["a"], "once, however often the report comes")
        #expect(second.deliveries == [report])
        #expect(try second.validated() == second)
        let frames = WireCodec().encodeFrames(second)
        #expect(try WireCodec().decodeWorkerMessage(frames).deliveries == [report])
    }

    @Test func aHeldFiringKeepsItsDestinationsUntilDue() {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        let due = Self.t0.addingTimeInterval(0.2)
        _ = state.onBatch(
            DispatchBatch(epoch: 1, leaseMilliseconds: 10_000, firings: [firing("a", for: "alice", dueAt: due)], destinations: ["alice": [Self.hook]]),
            at: Self.t0)
        let directives = state.onTimer(at: due)
        #expect(directives.contains { if case .deliverToDestinations(_, [Self.hook], 8) = $0 { true } else { false } })
    }

    @Test func aLeavingWorkerDoesNotAcknowledgeFiringsStillBeingDelivered() {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        _ = state.onBatch(
            DispatchBatch(epoch: 1, leaseMilliseconds: 10_000, firings: [firing("a", for: "alice")], destinations: ["alice": [Self.hook]]),
            at: Self.t0)
        let message = state.leave()
        #expect(message.acks.isEmpty && message.deliveries == nil && state.awaitingDestinationsCount == 0)
    }

    @Test func aBatchsFiringDestinationsReplaceTheRecipientsForThatFiringOnly() throws {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        let other = Destination.webhook(WebhookDestination(url: "https://example.org/other", secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]))
        let retried = firing("a", for: "alice")
        var batch = DispatchBatch(
            epoch: 1, leaseMilliseconds: 10_000, firings: [retried, firing("b", for: "alice"), firing("c", for: "alice")],
            destinations: ["alice": [Self.hook, other]])
        batch.firingDestinations = [retried.firingId.description: [other], firing("c", for: "alice").firingId.description: []]
        let codec = WireCodec()
        let decoded = try codec.decodeDispatch(codec.encodeFrames(batch))
        #expect(decoded == batch)
        let delivered: [String: [Destination]] = Dictionary(uniqueKeysWithValues: state.onBatch(decoded, at: Self.t0).compactMap {
            if case .deliverToDestinations(let event, let destinations, _) = $0 { (event.firing.reminderId.rawValue, destinations) } else { nil }
        })
        #expect(delivered == ["a": [other], "b": [Self.hook, other]], "c has every destination already: a fire event only")
        guard case .report(let report)? = state.onTick(monotonic: Self.m0).last else {
            Issue.record("no report")
            return
        }
        #expect(report.acks.map(\.firingId.key.id) == ["c"])
    }
}
