import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// Issue 40 item 5, what exceeds a throttle "is held, coalesced into the next allowed delivery,
/// or dropped as the reminder says, never silently lost": `content.throttled` `hold` (every
/// occurrence waits its slot), `coalesce` (one waits, the rest are suppressed naming it) and
/// `drop` (suppressed at once), each journaled, replayed and reloaded alike. Pure.
@Suite struct ThrottledPolicyTests {
    static let t0 = QuietHoursTests.t0
    let client = ClientAddress(routing: [Data([1])])

    static func minute(_ n: Double) -> Date { t0.addingTimeInterval(n * 60) }

    struct Run {
        var state: CoordinatorState
        var journal: [JournalEntry]
        var delivered: [(FiringID, Date)]
    }

    /// A reminder due every minute from minute 0, for a recipient allowed one delivery an
    /// hour, ticked at minutes 0 to 5 and 60.
    func run(_ policy: ThrottledPolicy) -> Run {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 86_400
        var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        state.finishRecovery(at: Self.t0)
        var journal = QuietHoursTests.entries(state.onRequest(ControlRequest(command: .register(Recipient(
            id: "alice", throttle: DeliveryThrottle(count: 1, seconds: 3600)))), from: client, at: Self.t0))
        journal += QuietHoursTests.entries(state.onRequest(ControlRequest(command: .schedule([Reminder(
            id: "nag", recipient: "alice", content: Content(title: "drink water", throttled: policy),
            trigger: Trigger(start: .instant(Self.t0), repeatRule: RepeatRule(unit: .minute, interval: 1)))])), from: client, at: Self.t0))
        var delivered: [(FiringID, Date)] = []
        for now in [0, 1, 2, 3, 4, 5, 60].map(Self.minute) {
            let (entries, firings) = QuietHoursTests.tickAndAcknowledge(&state, at: now)
            journal += entries
            delivered += firings.map { ($0.firingId, now) }
        }
        return Run(state: state, journal: journal, delivered: delivered)
    }

    func suppressions(_ journal: [JournalEntry]) -> [(Date, String)] {
        journal.compactMap { if case .suppressed(_, let dueAt, _, let reason, _) = $0 { (dueAt, reason) } else { nil } }
    }

    static let key = ReminderKey("nag", of: "alice")

    @Test func holdKeepsEveryOccurrenceInLine() throws {
        let run = run(.hold)
        #expect(suppressions(run.journal).isEmpty)
        // Minute 0 goes at once, minute 1 waits for minute 60, minutes 2 to 5 (and 60) queue behind it.
        #expect(run.delivered.map(\.0) == [FiringID(Self.key, dueAt: Self.minute(0)), FiringID(Self.key, dueAt: Self.minute(1))])
        #expect(run.state.durable.heldCount == 5)
        // The index coalesce reads (derived, outside equality) is kept live, on replay, by a
        // snapshot load and through a slice split and merge.
        let waiting = Set([2, 3, 4, 5, 6].map { FiringID(Self.key, dueAt: Self.minute($0)) })
        #expect(run.state.durable.deliveries.throttleHeld == [Self.key: waiting])
        var replayed = CoordinatorState(configuration: run.state.configuration, startedAt: Self.t0)
        for entry in run.journal { replayed.apply(entry) }
        #expect(replayed.durable.deliveries.throttleHeld == [Self.key: waiting])
        let decoded = try DurableState.decodeSnapshot(run.state.durable.encodedSnapshot(takenAt: Self.minute(61)), seed: run.state.durable.settings)
        #expect(decoded.state.deliveries.throttleHeld == [Self.key: waiting])
        let (slice, rest) = run.state.durable.split(where: { $0 == "alice" })
        #expect(slice.deliveries.throttleHeld == [Self.key: waiting] && rest.deliveries.throttleHeld.isEmpty)
        var merged = rest
        merged.merge(slice)
        #expect(merged.deliveries.throttleHeld == [Self.key: waiting])
        #expect(merged.throttleHeldFiring(of: Self.key) == FiringID(Self.key, dueAt: Self.minute(2)))
    }

    @Test func coalesceLeavesOneFiringWaitingAndSuppressesTheRestNamingIt() throws {
        let run = run(.coalesce)
        let waiting = FiringID(Self.key, dueAt: Self.minute(1))
        let reason = "coalesced into held firing \(waiting.text) (throttled: coalesce)"
        #expect(ThrottledPolicy.coalescedReason(into: waiting) == reason)
        // Minutes 2 to 5 coalesce into minute 1's firing, which goes out at minute 60; the
        // occurrence taken at minute 60 (minute 6's, the reminder then moves past now) finds
        // minute 1's firing still waiting for that slot and coalesces into it too.
        #expect(suppressions(run.journal).map(\.0) == [2, 3, 4, 5, 6].map(Self.minute))
        #expect(suppressions(run.journal).allSatisfy { $0.1 == reason })
        #expect(run.delivered.map(\.0) == [FiringID(Self.key, dueAt: Self.minute(0)), waiting])
        #expect(run.delivered.last?.1 == Self.minute(60))
        #expect(run.state.durable.heldCount == 0)
        try expectReplayAndSnapshotAgree(run)
    }

    @Test func dropSuppressesEveryOccurrenceOverTheThrottle() throws {
        let run = run(.drop)
        #expect(suppressions(run.journal).map(\.0) == [1, 2, 3, 4, 5].map(Self.minute))
        #expect(suppressions(run.journal).allSatisfy { $0.1 == "over the recipient's throttle (throttled: drop)" })
        // Minute 60 starts a new stretch: the occurrence taken then (minute 6's; the reminder
        // then moves past now) is delivered at once, nothing waiting before it.
        #expect(run.delivered.map(\.0) == [FiringID(Self.key, dueAt: Self.minute(0)), FiringID(Self.key, dueAt: Self.minute(6))])
        #expect(run.delivered.last?.1 == Self.minute(60))
        #expect(run.state.durable.heldCount == 0)
        try expectReplayAndSnapshotAgree(run)
    }

    func expectReplayAndSnapshotAgree(_ run: Run) throws {
        var replayed = CoordinatorState(configuration: run.state.configuration, startedAt: Self.t0)
        for entry in run.journal { replayed.apply(entry) }
        #expect(replayed.durable == run.state.durable)
        let decoded = try DurableState.decodeSnapshot(run.state.durable.encodedSnapshot(takenAt: Self.minute(61)), seed: run.state.durable.settings)
        #expect(decoded.state == run.state.durable)
    }

    @Test func thePolicyRoundTripsAndTheDefaultIsNotWritten() throws {
        let content = Content(title: "t", throttled: .coalesce)
        #expect(String(decoding: try JSONEncoder().encode(content), as: UTF8.self).contains(#""throttled":"coalesce""#))
        #expect(try JSONDecoder().decode(Content.self, from: JSONEncoder().encode(content)) == content)
        #expect(!String(decoding: try JSONEncoder().encode(Content(title: "t", throttled: .hold)), as: UTF8.self).contains("throttled"))
        #expect(!Content(title: "t", throttled: .hold).hasAttentionFields)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Content.self, from: Data(#"{"throttled":"later"}"#.utf8)) }
        let frames = WireCodec().encodeFrames(DispatchBatch(epoch: 1, leaseMilliseconds: 1, firings: [
            Firing(reminderId: "r", recipient: "alice", dueAt: Self.t0, content: Content(title: "t", throttled: .drop)),
        ]))
        #expect(try WireCodec().decodeDispatch(frames).firings.first?.content.throttled == .drop)
    }
}
