import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeWorker

/// A coordinator that takes over (a newer epoch) hands out again every firing whose
/// acknowledgement it has not journaled. A worker that still sends one, or has delivered it to
/// every destination, does not send it to them again (found by test_webhook_moves.py: 2-3 of
/// 36 webhooks were POSTed twice across a SIGKILL of the active coordinator, no worker lost).
@Suite struct WorkerStateRedeliveryTests {
    static let t0 = WorkerStateTests.t0
    static let m0 = WorkerStateTests.m0
    static let hook = WorkerStateDestinationTests.hook
    static let other = Destination.webhook(WebhookDestination(url: "https://example.org/other", secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]))

    static let firing = Firing(reminderId: ReminderID("a"), recipient: "alice", dueAt: t0, content: Content(body: "a"))

    static func batch(epoch: UInt64, attempt: Int = 1, destinations: [Destination] = [hook]) -> DispatchBatch {
        var firing = Self.firing
        firing.attempt = attempt
        return DispatchBatch(epoch: epoch, leaseMilliseconds: 5_000, firings: [firing], destinations: ["alice": destinations])
    }

    static func report(_ outcome: DestinationOutcome.Kind = .delivered, destinations: [Destination] = [hook], attempts: Int = 1) -> DeliveryReport {
        let outcomes = destinations.map { destination in
            DestinationOutcome(
                destination: destination.redactedKey, channel: "webhook", outcome: outcome, reason: outcome == .delivered ? nil : "HTTP 400",
                attempts: (1...attempts).map { DeliveryAttemptRecord(at: t0, worker: "w1", number: $0, status: $0 == attempts ? 200 : 503, error: nil) })
        }
        return DeliveryReport(firingId: firing.firingId, outcomes: outcomes)
    }

    /// What a batch made the worker do: how many fire events, and the destinations of each
    /// `deliverToDestinations`.
    static func effects(_ directives: [WorkerDirective]) -> (published: Int, sent: [[Destination]]) {
        var published = 0
        var sent: [[Destination]] = []
        for directive in directives {
            switch directive {
            case .publish: published += 1
            case .deliverToDestinations(_, let destinations, _): sent.append(destinations)
            default: break
            }
        }
        return (published, sent)
    }

    static func acknowledgements(_ state: inout WorkerState, at monotonic: Double) -> WorkerMessage? {
        guard case .report(let message)? = state.onTick(monotonic: monotonic).last else { return nil }
        return message
    }

    @Test func aNewerEpochHandingOutAFiringDeliveredToEveryDestinationGetsItsAcknowledgementNotASecondRequest() throws {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        #expect(Self.effects(state.onBatch(Self.batch(epoch: 1), at: Self.t0)).sent == [[Self.hook]])
        state.onDeliveryReport(Self.report(attempts: 3), monotonic: Self.m0)
        let first = try #require(Self.acknowledgements(&state, at: Self.m0 + 0.1))
        #expect(first.acks.map(\.epoch) == [1] && first.deliveries == [Self.report(attempts: 3)])

        // The coordinator died before journaling that acknowledgement; its standby (epoch 2)
        // hands the firing out again.
        let again = Self.effects(state.onBatch(Self.batch(epoch: 2, attempt: 2), at: Self.t0.addingTimeInterval(1)))
        #expect(again.published == 1, "the fire event is published as before")
        #expect(again.sent == [], "no second request to the webhook")
        let second = try #require(Self.acknowledgements(&state, at: Self.m0 + 0.2))
        #expect(second.acks.map(\.firingId) == [Self.firing.firingId])
        #expect(second.acks.map(\.epoch) == [2] && second.acks.map(\.attempt) == [2], "counted by the newer coordinator")
        var lastAttemptOnly = Self.report(attempts: 3)
        lastAttemptOnly.outcomes[0].attempts = [DeliveryAttemptRecord(at: Self.t0, worker: "w1", number: 3, status: 200, error: nil)]
        #expect(second.deliveries == [lastAttemptOnly], "the same outcome, its last attempt only")
        #expect(state.redeliveriesNotResent == 1)
        #expect(try second.validated() == second)

        // A third coordinator (epoch 3) before that acknowledgement was journaled: the same.
        #expect(Self.effects(state.onBatch(Self.batch(epoch: 3, attempt: 3), at: Self.t0.addingTimeInterval(2))).sent == [])
        #expect(try #require(Self.acknowledgements(&state, at: Self.m0 + 0.3)).acks.map(\.epoch) == [3])
        #expect(state.redeliveriesNotResent == 2)
    }

    @Test func aNewerEpochHandingOutAFiringStillBeingSentIsAcknowledgedOnceByItsReport() throws {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        #expect(Self.effects(state.onBatch(Self.batch(epoch: 1), at: Self.t0)).sent == [[Self.hook]])
        #expect(Self.effects(state.onBatch(Self.batch(epoch: 2, attempt: 2), at: Self.t0.addingTimeInterval(0.1))).sent == [])
        #expect(Self.acknowledgements(&state, at: Self.m0)?.acks == [], "nothing before the report")
        #expect(state.awaitingDestinationsCount == 1)
        state.onDeliveryReport(Self.report(), monotonic: Self.m0 + 0.1)
        state.onDeliveryReport(Self.report(), monotonic: Self.m0 + 0.1)
        let message = try #require(Self.acknowledgements(&state, at: Self.m0 + 0.2))
        #expect(message.acks.map(\.epoch) == [2] && message.acks.map(\.attempt) == [2])
        #expect(message.deliveries == [Self.report()])
        #expect(state.redeliveriesNotResent == 1 && state.awaitingDestinationsCount == 0)
    }

    @Test func theSameEpochAFailedDestinationOrANewDestinationIsSentAgain() throws {
        // The same epoch hands a delivered firing out again (a retried dead letter, a lease
        // that ran out): sent again.
        var same = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        _ = same.onBatch(Self.batch(epoch: 1), at: Self.t0)
        same.onDeliveryReport(Self.report(), monotonic: Self.m0)
        #expect(Self.effects(same.onBatch(Self.batch(epoch: 1, attempt: 2), at: Self.t0)).sent == [[Self.hook]])

        // A destination refused it: not remembered, a newer epoch sends it again.
        var failed = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        _ = failed.onBatch(Self.batch(epoch: 1), at: Self.t0)
        failed.onDeliveryReport(Self.report(.refused), monotonic: Self.m0)
        #expect(Self.effects(failed.onBatch(Self.batch(epoch: 2), at: Self.t0)).sent == [[Self.hook]])

        // A destination added since (delivered or still being sent): the firing goes out to
        // all of them, as before.
        var added = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        _ = added.onBatch(Self.batch(epoch: 1), at: Self.t0)
        #expect(Self.effects(added.onBatch(Self.batch(epoch: 2, destinations: [Self.hook, Self.other]), at: Self.t0)).sent == [[Self.hook, Self.other]])
        added.onDeliveryReport(Self.report(destinations: [Self.hook, Self.other]), monotonic: Self.m0)
        #expect(Self.effects(added.onBatch(Self.batch(epoch: 3, destinations: [Self.other]), at: Self.t0)).sent == [], "a subset was delivered")
        #expect(added.redeliveriesNotResent == 1)
    }

    @Test func theMemoryOfDeliveredFiringsIsBounded() {
        var memory = DeliveredFirings()
        let ids = (0...DeliveredFirings.capacity + 1).map {
            FiringID(ReminderKey(ReminderID("r\($0)"), of: "alice"), dueAt: Self.t0)
        }
        for id in ids {
            memory.remember(DeliveryReport(firingId: id, outcomes: []), epoch: 1, destinationKeys: [Self.hook.key])
        }
        #expect(memory.count == DeliveredFirings.capacity)
        #expect(memory[ids[0]] == nil && memory[ids[1]] == nil, "the oldest are forgotten first")
        #expect(memory[ids[2]]?.epoch == 1 && memory[ids[ids.count - 1]]?.destinationKeys == [Self.hook.key])
    }
}
