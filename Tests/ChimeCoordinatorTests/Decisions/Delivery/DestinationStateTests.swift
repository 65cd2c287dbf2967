import ChimeCore
import ChimeJournal
import ChimeSecurity
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// Destinations through the fold: the `destinations` request, dispatch carrying them, worker
/// reports removing gone ones and dead-lettering failed firings with their cause; the same
/// state live, replayed and reloaded from a snapshot.
@Suite struct DestinationStateTests {
    typealias Run = DurableStateTests.Run
    static let t0 = DurableStateTests.t0
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let hook = Destination.webhook(WebhookDestination(url: "https://example.com/hook", secrets: [secret]))
    static let phone = Destination.apns(APNsDestination(token: String(repeating: "ab", count: 32), topic: "com.example.app"))

    static func reminder(_ id: ReminderID, for recipient: RecipientID = "alice", in seconds: Double = 60) -> Reminder {
        Reminder(id: id, recipient: recipient, content: Content(body: "b"), trigger: Trigger(start: .instant(t0.addingTimeInterval(seconds))))
    }

    static func batches(_ directives: [CoordinatorDirective]) -> [DispatchBatch] {
        directives.compactMap { if case .dispatch(let batch, _) = $0 { batch } else { nil } }
    }

    /// alice with both destinations and a reminder dispatched at t0 + 60 s.
    func dispatched() throws -> (Run, Firing, DispatchBatch) {
        var run = Run()
        run.request(.destinations("alice", add: [Self.hook, Self.phone], remove: []))
        run.request(.schedule([Self.reminder("r1"), Self.reminder("r2", for: "bob")]))
        run.worker(at: Self.t0)
        let batch = try #require(Self.batches(run.tick(at: Self.t0.addingTimeInterval(60))).first)
        let firing = try #require(batch.firings.first { $0.recipient == "alice" })
        return (run, firing, batch)
    }

    @Test func addingDestinationsKeepsTheRegistrationAndReRegisteringKeepsTheDestinations() throws {
        var run = Run()
        run.request(.register(Recipient(id: "alice", settings: [.alert], zone: "Europe/Berlin")))
        guard case .recipient(let added) = run.request(.destinations("alice", add: [Self.hook, Self.phone], remove: [])) else {
            Issue.record("no recipient reply")
            return
        }
        #expect(added.recipient.settings == [.alert] && added.recipient.zone == "Europe/Berlin")
        #expect(added.recipient.destinations?.map(\.key) == [
            "webhook:https://example.com/hook", "apns:abababab…abab",
        ])
        guard case .webhook(let shown)? = added.recipient.destinations?.first else { return }
        #expect(shown.secrets == ["<redacted>"])
        run.request(.register(Recipient(id: "alice", settings: .all)))
        #expect(run.state.recipients["alice"]?.destinations == [Self.hook, Self.phone])
        run.request(.destinations("alice", add: [], remove: [Self.hook.key]))
        #expect(run.state.recipients["alice"]?.destinations == [Self.phone])
        guard case .failed(let error) = run.request(.destinations("alice", add: [], remove: [Self.hook.key])) else {
            Issue.record("removing twice succeeded")
            return
        }
        #expect(error.code == .notFound && error.field == "remove[0]")
        run.request(.destinations("alice", add: [], remove: [Self.phone.key]))
        #expect(run.state.recipients["alice"]?.destinations == nil, "the last one removed")
        #expect(run.state.recipients["alice"]?.settings == .all)
        #expect(run.replayed().durable == run.state.durable)
        #expect(try run.reloaded().durable == run.state.durable)
    }

    @Test func anInvalidDestinationIsRefusedNamingItsField() {
        var run = Run()
        let bad = Destination.webhook(WebhookDestination(url: "ftp://example.com", secrets: [Self.secret]))
        guard case .failed(let error) = run.request(.destinations("alice", add: [bad], remove: [])) else {
            Issue.record("accepted an ftp URL")
            return
        }
        #expect(error.field == "recipient.destinations[0].url")
        #expect(run.state.recipients["alice"] == nil)
    }

    @Test func aBatchCarriesTheDestinationsOfItsRecipientsThatHaveAny() throws {
        let (_, _, batch) = try dispatched()
        #expect(batch.destinations == ["alice": [Self.hook, Self.phone]])
        var run = Run()
        run.request(.schedule([Self.reminder("r1")]))
        run.worker(at: Self.t0)
        let plain = try #require(Self.batches(run.tick(at: Self.t0.addingTimeInterval(60))).first)
        #expect(plain.destinations == nil)
        #expect(!String(decoding: WireCodec().encodeFrames(plain)[0], as: UTF8.self).contains("destinations"))
    }

    static func attempt(_ number: Int, status: Int?, error: String?) -> DeliveryAttemptRecord {
        DeliveryAttemptRecord(at: t0.addingTimeInterval(61), worker: "w1", number: number, status: status, error: error)
    }

    mutating func report(_ run: inout Run, _ firing: Firing, _ outcomes: [DestinationOutcome]) -> [CoordinatorDirective] {
        var message = WorkerMessage(
            worker: "w1", host: "h", pid: 1, capacity: 8, delivered: 1,
            acks: [WorkerMessage.Acknowledgement(firingId: firing.firingId, firedAt: Self.t0.addingTimeInterval(61), attempt: 1, epoch: 1)])
        message.deliveries = [DeliveryReport(firingId: firing.firingId, outcomes: outcomes)]
        return run.keep(run.state.onWorkerMessage(message, viaDispatch: true, at: Self.t0.addingTimeInterval(61)))
    }

    @Test mutating func aFailedDestinationDeadLettersTheFiringWithItsCauseAndAttempts() throws {
        var (run, firing, _) = try dispatched()
        let refused = DestinationOutcome(
            destination: Self.hook.redactedKey, channel: "webhook", outcome: .refused, reason: "HTTP 400: bad payload",
            attempts: [Self.attempt(1, status: 400, error: "HTTP 400: bad payload")])
        let delivered = DestinationOutcome(
            destination: Self.phone.redactedKey, channel: "apns", outcome: .delivered, reason: nil,
            attempts: [Self.attempt(1, status: 200, error: nil)])
        let directives = report(&run, firing, [refused, delivered])
        let entries = directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
        #expect(entries.count == 1)
        guard case .deliveryFailed(let id, let failure, _)? = entries.first else {
            Issue.record("not dead-lettered: \(entries)")
            return
        }
        #expect(id == firing.firingId)
        #expect(failure.cause == "webhook:https://example.com/hook refused: HTTP 400: bad payload")
        #expect(failure.outcomes == [refused, delivered])
        // Dead-lettered, not acknowledged, in the counters /metrics serves.
        #expect((run.state.counters.deadLettered, run.state.counters.acknowledged) == (1, 0))
        guard case .deadLetters(let page) = run.request(.deadLetters(limit: nil, cursor: nil)) else {
            Issue.record("no page")
            return
        }
        #expect(page.firings.map(\.firingId) == [firing.firingId])
        #expect(page.failures?[firing.firingId.description]?.cause == failure.cause)
        #expect(run.replayed().durable == run.state.durable)
        #expect(try run.reloaded().durable == run.state.durable)
        run.request(.retry(firing.firingId))
        #expect(run.state.durable.deliveries.deadLetterFailures.isEmpty)
    }

    @Test mutating func aGoneDestinationIsRemovedDurablyAndSaidInTheEventStream() throws {
        var (run, firing, _) = try dispatched()
        let gone = DestinationOutcome(
            destination: Self.phone.redactedKey, channel: "apns", outcome: .removed, reason: "HTTP 410: Unregistered",
            attempts: [Self.attempt(1, status: 410, error: "HTTP 410: Unregistered")])
        let delivered = DestinationOutcome(
            destination: Self.hook.redactedKey, channel: "webhook", outcome: .delivered, reason: nil,
            attempts: [Self.attempt(1, status: 204, error: nil)])
        let directives = report(&run, firing, [delivered, gone])
        #expect(run.state.recipients["alice"]?.destinations == [Self.hook])
        let events = directives.compactMap { if case .publish(.destinationRemoved(let event)) = $0 { event } else { nil } }
        #expect(events.map(\.destination) == ["apns:abababab…abab"])
        #expect(events.first?.reason == "HTTP 410: Unregistered")
        #expect(events.first.map { CoordinatorEvent.destinationRemoved($0).topic } == "destination.alice")
        #expect(run.state.durable.deliveries.deadLetters.isEmpty, "a removed destination is no failure of the firing")
        #expect(run.state.durable.deliveries.unsettled[firing.firingId] == nil, "acknowledged")
        #expect(run.replayed().durable == run.state.durable)
    }
}

extension DestinationStateTests {
    @Test func aRestrictedKeysRecipientsShareItsDestinationQuota() {
        var run = Run { $0.tenantMaxDestinations = 3 }
        let tenant = ClientAddress(routing: [Data([1])], tenant: "key-a", scope: RecipientScope(prefixes: ["a-"]))
        func request(_ recipient: RecipientID, add: [Destination], remove: [String] = []) -> ControlOutcome {
            let directives = run.keep(run.state.onRequest(
                ControlRequest(command: .destinations(recipient, add: add, remove: remove)), from: tenant, at: Self.t0))
            guard case .reply(let outcome, _, _)? = directives.last else { return .failed(WireError(.internal, "no reply")) }
            return outcome
        }
        let tokens = (0..<4).map { Destination.fcm(FCMDestination(token: "t\($0)")) }
        guard case .recipient = request("a-1", add: Array(tokens[0..<2])), case .recipient = request("a-2", add: [tokens[2]]) else {
            Issue.record("refused under the quota")
            return
        }
        guard case .failed(let error) = request("a-2", add: [tokens[3]]) else {
            Issue.record("accepted a fourth destination")
            return
        }
        #expect(error.code == .quotaExceeded && error.field == "add")
        guard case .recipient = request("a-2", add: [tokens[3]], remove: [tokens[2].key]) else {
            Issue.record("a swap is refused")
            return
        }
        guard case .recipient = request("a-2", add: [tokens[3]]) else {
            Issue.record("replacing a held key is refused")
            return
        }
    }
}

extension DestinationStateTests {
    /// A slot move carries a recipient's destinations and its dead letters' causes: the slice
    /// encodes on its own, and rest + slice merge back into the state.
    @Test mutating func aSliceCarriesDestinationsAndDeadLetterCauses() throws {
        var (run, firing, _) = try dispatched()
        let refused = DestinationOutcome(
            destination: Self.hook.redactedKey, channel: "webhook", outcome: .refused, reason: "HTTP 400",
            attempts: [Self.attempt(1, status: 400, error: "HTTP 400")])
        _ = report(&run, firing, [refused])
        let state = run.state.durable
        #expect(state.deliveries.deadLetterFailures.count == 1)
        let (slice, rest) = state.split { $0 == "alice" }
        #expect(slice.recipients.holdingDestinations == ["alice"] && rest.recipients.holdingDestinations.isEmpty)
        #expect(slice.deliveries.deadLetterFailures[firing.firingId]?.cause == "webhook:https://example.com/hook refused: HTTP 400")
        #expect(rest.deliveries.deadLetterFailures.isEmpty)
        let decoded = try DurableState.decodeSnapshot(slice.encodedSnapshot(takenAt: nil), seed: state.settings)
        #expect(decoded.state == slice)
        var merged = rest
        merged.merge(decoded.state)
        #expect(merged == state)
    }

    static func outcome(_ destination: Destination, _ kind: DestinationOutcome.Kind, status: Int) -> DestinationOutcome {
        DestinationOutcome(
            destination: destination.redactedKey, channel: destination.channel, outcome: kind,
            reason: kind == .delivered ? nil : "HTTP \(status)", attempts: [attempt(1, status: status, error: nil)])
    }

    /// The dispatch after `retry` of `firing`, at `seconds` after t0.
    func retried(_ run: inout Run, _ firing: Firing, at seconds: Double) throws -> DispatchBatch {
        run.request(.retry(firing.firingId))
        return try #require(Self.batches(run.tick(at: Self.t0.addingTimeInterval(seconds))).first)
    }

    @Test mutating func aRetriedDeadLetterGoesOnlyToTheDestinationsThatDoNotHaveItYet() throws {
        var (run, firing, _) = try dispatched()
        let key = firing.firingId.description
        _ = report(&run, firing, [Self.outcome(Self.hook, .refused, status: 400), Self.outcome(Self.phone, .delivered, status: 200)])
        #expect(run.state.durable.deliveries.retrySkips == [firing.firingId: [Self.phone.redactedKey]])
        #expect(run.replayed().durable == run.state.durable)
        #expect(try run.reloaded().durable == run.state.durable)

        // A destination added since gets it too; the phone that has it does not.
        let tablet = Destination.fcm(FCMDestination(token: "dQw4w9WgXcQ:APA91bH-x_y-tablet-token"))
        run.request(.destinations("alice", add: [tablet], remove: []))
        let first = try retried(&run, firing, at: 62)
        #expect(first.firings.map(\.firingId) == [firing.firingId])
        #expect(first.firingDestinations == [key: [Self.hook, tablet]])
        #expect(first.destinations == ["alice": [Self.hook, Self.phone, tablet]])

        // The tablet takes it, the hook gives up again: the next retry goes to the hook alone.
        _ = report(&run, firing, [Self.outcome(Self.hook, .gaveUp, status: 503), Self.outcome(tablet, .delivered, status: 200)])
        #expect(run.state.durable.deliveries.retrySkips[firing.firingId] == [tablet.redactedKey, Self.phone.redactedKey].sorted())
        // The skips move with the recipient's slice and merge back.
        let (slice, rest) = run.state.durable.split { $0 == "alice" }
        #expect(slice.deliveries.retrySkips.keys.map(\.self) == [firing.firingId] && rest.deliveries.retrySkips.isEmpty)
        var merged = rest
        merged.merge(slice)
        #expect(merged.deliveries.retrySkips == run.state.durable.deliveries.retrySkips)
        let second = try retried(&run, firing, at: 63)
        #expect(second.firingDestinations == [key: [Self.hook]])
        #expect(run.replayed().durable == run.state.durable)
        #expect(try run.reloaded().durable == run.state.durable)

        // Delivered at last: acknowledged, and nothing is kept for it.
        _ = report(&run, firing, [Self.outcome(Self.hook, .delivered, status: 204)])
        #expect(run.state.durable.deliveries.retrySkips.isEmpty)
        #expect(run.state.durable.deliveries.deadLetters.isEmpty && run.state.durable.deliveries.unsettled[firing.firingId] == nil)
        #expect(run.replayed().durable == run.state.durable)
    }

    @Test mutating func aDeletedDeadLetterKeepsNoSkipsAndOrdinaryBatchesCarryNone() throws {
        var (run, firing, batch) = try dispatched()
        #expect(batch.firingDestinations == nil)
        #expect(!String(decoding: WireCodec().encodeFrames(batch)[0], as: UTF8.self).contains("firingDestinations"))
        _ = report(&run, firing, [Self.outcome(Self.hook, .refused, status: 400), Self.outcome(Self.phone, .delivered, status: 200)])
        #expect(run.state.durable.deliveries.retrySkips.count == 1)
        run.request(.deleteDeadLetter(firing.firingId))
        #expect(run.state.durable.deliveries.retrySkips.isEmpty)
        #expect(run.replayed().durable == run.state.durable)
    }
}
