import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// Why a firing is held, recorded when it comes due (the last rule that moved its release),
/// journaled with the hold, listed by `list`, kept by snapshots, slot moves and replays, and
/// re-set when a re-registration moves the hold into a new quiet window. Pure, time passed in.
@Suite struct HoldReasonTests {
    /// 2026-12-24T08:00:00Z, 09:00 in Berlin.
    static let t0 = QuietHoursTests.t0
    /// 23:30 in Berlin on 2026-12-24, in the 22:00–07:00 window.
    static let lateEvening = QuietHoursTests.lateEvening
    /// 07:00 in Berlin on 2026-12-25, the window's end.
    static let morning = QuietHoursTests.morning
    let client = ClientAddress(routing: [Data([1])])

    /// A state with `recipient` registered in Berlin and one active reminder per instant of
    /// `due` (ids `r0`, `r1`, …), ticked at each instant; returns the state and the journal.
    func run(_ recipient: Recipient, due: [Date], ticks: [Date]) -> (CoordinatorState, [JournalEntry]) {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 86_400
        var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        state.finishRecovery(at: Self.t0)
        var journal = QuietHoursTests.entries(state.onRequest(ControlRequest(command: .register(recipient)), from: client, at: Self.t0))
        journal += QuietHoursTests.entries(state.onRequest(ControlRequest(command: .schedule(due.enumerated().map { index, instant in
            Reminder(id: ReminderID("r\(index)"), recipient: recipient.id, content: Content(title: "t"), trigger: Trigger(start: .instant(instant)))
        })), from: client, at: Self.t0))
        for now in ticks { journal += QuietHoursTests.tickAndAcknowledge(&state, at: now).entries }
        return (state, journal)
    }

    /// The `(until, reason)` of each `.held` entry in `journal`, in journal order.
    static func holds(_ journal: [JournalEntry]) -> [Date: HoldReason?] {
        var holds: [Date: HoldReason?] = [:]
        for case .attention(.held(_, _, _, _, _, let until, let reason, _)) in journal { holds[until] = reason }
        return holds
    }

    static func listed(_ state: CoordinatorState, _ recipient: RecipientID, _ ids: [ReminderID]) -> [HoldReason?] {
        let keys = Set(ids.map { ReminderKey($0, of: recipient) })
        let listings = state.durable.heldListings(of: keys)
        return ids.map { listings[ReminderKey($0, of: recipient)]?.first?.reason }
    }

    @Test func eachRuleNamesItselfAndTheLastRuleThatMovedTheReleaseWins() {
        let night = QuietWindow(start: 22 * 60, end: 7 * 60)
        // Quiet hours alone: released at 07:00.
        let (quiet, quietJournal) = run(
            Recipient(id: "q", zone: "Europe/Berlin", quietHours: [night]), due: [Self.lateEvening], ticks: [Self.lateEvening])
        #expect(Self.holds(quietJournal) == [Self.morning: .quietHours])
        #expect(Self.listed(quiet, "q", ["r0"]) == [.quietHours])

        // Quiet hours, then the 08:00 summary after the window.
        let (both, bothJournal) = run(
            Recipient(id: "qs", zone: "Europe/Berlin", quietHours: [night], summaryTimes: [8 * 60]), due: [Self.lateEvening], ticks: [Self.lateEvening])
        #expect(Self.holds(bothJournal) == [Self.morning + 3600: .quietHoursThenSummary])
        #expect(Self.listed(both, "qs", ["r0"]) == [.quietHoursThenSummary])

        // A summary alone: due 10:00 in Berlin, out at 18:00 (17:00Z).
        let ten = Self.t0 + 3600
        let (summary, summaryJournal) = run(
            Recipient(id: "s", zone: "Europe/Berlin", summaryTimes: [18 * 60]), due: [ten], ticks: [ten])
        #expect(Self.holds(summaryJournal) == [Self.t0 + 9 * 3600: .summary])
        #expect(Self.listed(summary, "s", ["r0"]) == [.summary])

        // One delivery an hour and quiet hours: r0 goes out at 10:00, r1 (due 10:30) waits for
        // the throttle's slot at 11:00, and r2, due in the night, is held by the window whose
        // 07:00 end the throttle does not move (the slot is long past by then).
        let throttled = Recipient(id: "t", zone: "Europe/Berlin", quietHours: [night], throttle: DeliveryThrottle(count: 1, seconds: 3600))
        let (throttle, throttleJournal) = run(
            throttled, due: [ten, ten + 1800, Self.lateEvening], ticks: [ten, ten + 1800, Self.lateEvening])
        #expect(Self.holds(throttleJournal) == [ten + 3600: .throttle, Self.morning: .quietHours])
        #expect(Self.listed(throttle, "t", ["r0", "r1", "r2"]) == [nil, nil, .quietHours], "r1 went out at 11:00, before the night tick")
    }

    @Test func aThrottleSlotPastTheQuietWindowsEndNamesTheThrottle() {
        // Two due in the night, one delivery an hour: both held to 07:00 by the window; the
        // second's slot is 08:00, after the first's delivery at 07:00.
        let recipient = Recipient(
            id: "a", zone: "Europe/Berlin", quietHours: [QuietWindow(start: 22 * 60, end: 7 * 60)],
            throttle: DeliveryThrottle(count: 1, seconds: 3600))
        let (state, journal) = run(recipient, due: [Self.lateEvening, Self.lateEvening + 60], ticks: [Self.lateEvening, Self.lateEvening + 60])
        #expect(Self.holds(journal) == [Self.morning: .quietHours, Self.morning + 3600: .throttle])
        #expect(Self.listed(state, "a", ["r0", "r1"]) == [.quietHours, .throttle])
    }

    @Test func theReasonSurvivesReplayASnapshotAndASliceSplitAndMerge() throws {
        let recipient = Recipient(
            id: "alice", zone: "Europe/Berlin", quietHours: [QuietWindow(start: 22 * 60, end: 7 * 60)], summaryTimes: [8 * 60])
        let (live, journal) = run(recipient, due: [Self.lateEvening], ticks: [Self.lateEvening])
        let id = FiringID(ReminderKey("r0", of: "alice"), dueAt: Self.lateEvening)
        #expect(live.durable.deliveries.holdReasons == [id: .quietHoursThenSummary])

        var replayed = CoordinatorState(configuration: live.configuration, startedAt: Self.t0)
        for entry in journal { replayed.apply(entry) }
        #expect(replayed.durable.deliveries.holdReasons == [id: .quietHoursThenSummary])
        #expect(replayed.durable == live.durable)

        let decoded = try DurableState.decodeSnapshot(live.durable.encodedSnapshot(takenAt: Self.lateEvening), seed: live.durable.settings)
        #expect(decoded.state.deliveries.holdReasons == [id: .quietHoursThenSummary])

        // A slot move: the source splits the recipient's slice off, the target merges it.
        let (slice, rest) = live.durable.split(where: { $0 == "alice" })
        #expect(slice.deliveries.holdReasons == [id: .quietHoursThenSummary])
        #expect(rest.deliveries.holdReasons.isEmpty)
        var merged = rest
        merged.merge(slice)
        #expect(merged.deliveries.holdReasons == [id: .quietHoursThenSummary])
    }

    @Test func aReRegistrationDecidesEachHoldAgainOnTheNewClock() {
        // Held for the 18:00 summary (due 10:00 in Berlin); at 12:00Z alice moves to Tokyo,
        // where it is 21:00, inside a 20:00–08:00 window: quiet to 08:00 Tokyo (23:00Z), then
        // the 18:00 Tokyo summary (09:00Z the next day).
        let due = Self.t0 + 3600
        var (state, _) = run(Recipient(id: "alice", zone: "Europe/Berlin", summaryTimes: [18 * 60]), due: [due], ticks: [due])
        let id = FiringID(ReminderKey("r0", of: "alice"), dueAt: due)
        #expect(state.durable.deliveries.holdReasons == [id: .summary])
        let moved = Self.t0 + 4 * 3600
        let tokyo = Recipient(id: "alice", zone: "Asia/Tokyo", quietHours: [QuietWindow(start: 20 * 60, end: 8 * 60)], summaryTimes: [18 * 60])
        _ = state.onRequest(ControlRequest(command: .register(tokyo)), from: client, at: moved)
        #expect(state.durable.deliveries.holds.deadline(of: id) == Self.t0 + 25 * 3600)
        #expect(state.durable.deliveries.holdReasons == [id: .quietHoursThenSummary])
        // Summaries off: only the quiet window holds it now.
        var quietOnly = tokyo
        quietOnly.summaryTimes = []
        _ = state.onRequest(ControlRequest(command: .register(quietOnly)), from: client, at: moved + 60)
        #expect(state.durable.deliveries.holds.deadline(of: id) == Self.t0 + 15 * 3600)
        #expect(state.durable.deliveries.holdReasons == [id: .quietHours])
        // Nothing holds it any more: released at the registration, its reason kept.
        _ = state.onRequest(ControlRequest(command: .register(Recipient(id: "alice", zone: "Asia/Tokyo"))), from: client, at: moved + 120)
        #expect(state.durable.deliveries.holds.deadline(of: id) == moved + 120)
        #expect(state.durable.deliveries.holdReasons == [id: .quietHours])
    }

    @Test func aThrottleHoldKeepsItsSlotWhenTheZoneChanges() {
        // One delivery an hour: r1 (due 10:30 in Berlin) waits for 11:00; moving to New York
        // (04:30 there, no quiet hours) leaves the slot where it is.
        let ten = Self.t0 + 3600
        var (state, _) = run(
            Recipient(id: "t", zone: "Europe/Berlin", throttle: DeliveryThrottle(count: 1, seconds: 3600)),
            due: [ten, ten + 1800], ticks: [ten, ten + 1800])
        let id = FiringID(ReminderKey("r1", of: "t"), dueAt: ten + 1800)
        #expect(state.durable.deliveries.holdReasons == [id: .throttle])
        _ = state.onRequest(ControlRequest(command: .register(Recipient(
            id: "t", zone: "America/New_York", throttle: DeliveryThrottle(count: 1, seconds: 3600)))), from: client, at: ten + 2000)
        #expect(state.durable.deliveries.holds.deadline(of: id) == ten + 3600)
        #expect(state.durable.deliveries.holdReasons == [id: .throttle])
        // A quiet window now (04:00–08:00 in New York, 09:00–13:00Z; it is 04:35 there)
        // holds it longer, as a throttled firing still; without the window again it keeps
        // that later instant, never an earlier one than its slot.
        let morning = Recipient(
            id: "t", zone: "America/New_York", quietHours: [QuietWindow(start: 4 * 60, end: 8 * 60)],
            throttle: DeliveryThrottle(count: 1, seconds: 3600))
        _ = state.onRequest(ControlRequest(command: .register(morning)), from: client, at: ten + 2100)
        #expect(state.durable.deliveries.holds.deadline(of: id) == Self.t0 + 5 * 3600)
        #expect(state.durable.deliveries.holdReasons == [id: .throttle])
        var plain = morning
        plain.quietHours = []
        _ = state.onRequest(ControlRequest(command: .register(plain)), from: client, at: ten + 2200)
        #expect(state.durable.deliveries.holds.deadline(of: id) == Self.t0 + 5 * 3600)
    }

    @Test func aQuietHoldWaitsForSummaryTimesAddedLater() {
        let night = QuietWindow(start: 22 * 60, end: 7 * 60)
        var (state, _) = run(Recipient(id: "alice", zone: "Europe/Berlin", quietHours: [night]), due: [Self.lateEvening], ticks: [Self.lateEvening])
        let id = FiringID(ReminderKey("r0", of: "alice"), dueAt: Self.lateEvening)
        #expect(state.durable.deliveries.holdReasons == [id: .quietHours])
        _ = state.onRequest(ControlRequest(command: .register(Recipient(
            id: "alice", zone: "Europe/Berlin", quietHours: [night], summaryTimes: [8 * 60]))), from: client, at: Self.lateEvening + 60)
        #expect(state.durable.deliveries.holds.deadline(of: id) == Self.morning + 3600)
        #expect(state.durable.deliveries.holdReasons == [id: .quietHoursThenSummary])
    }

    @Test func aHeldEntryJournaledBeforeReasonsWereRecordedDecodesWithoutOne() throws {
        let entry = AttentionEntry.held(
            ReminderKey("r", of: "alice"), dueAt: Self.lateEvening, next: nil, late: false, missed: 0, until: Self.morning, at: Self.lateEvening)
        let encoded = try JSONEncoder().encode(entry)
        #expect(!String(decoding: encoded, as: UTF8.self).contains("reason"), "no reason, no key: the old shape")
        #expect(try JSONDecoder().decode(AttentionEntry.self, from: encoded) == entry)
        let recorded = AttentionEntry.held(
            ReminderKey("r", of: "alice"), dueAt: Self.lateEvening, next: nil, late: false, missed: 0, until: Self.morning,
            reason: .throttle, at: Self.lateEvening)
        let recordedJSON = try JSONEncoder().encode(recorded)
        #expect(String(decoding: recordedJSON, as: UTF8.self).contains("\"reason\":\"throttle\""))
        #expect(try JSONDecoder().decode(AttentionEntry.self, from: recordedJSON) == recorded)
        // A reason this version does not know is refused, not read as another.
        let unknown = String(decoding: recordedJSON, as: UTF8.self).replacingOccurrences(of: "\"throttle\"", with: "\"nap\"")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(AttentionEntry.self, from: Data(unknown.utf8)) }
    }
}
