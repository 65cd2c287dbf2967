import ChimeCore
import ChimeStore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator


/// The epoch recorded by the fold and the snapshot, so a start can take the highest.
@Suite struct CoordinatorEpochTests {
    static let noon = Date(timeIntervalSince1970: 1_798_113_600)  // 2026-12-24T12:00:00Z

    @Test func theFoldKeepsTheHighestStartedEpoch() {
        var state = CoordinatorState(startedAt: Self.noon)
        #expect(state.highestRecordedEpoch == 0)
        state.apply(.started(epoch: 4, at: Self.noon))
        state.apply(.started(epoch: 9, at: Self.noon))
        // A stale entry (never written by a growing epoch, but a fold must not go back).
        state.apply(.started(epoch: 2, at: Self.noon))
        #expect(state.highestRecordedEpoch == 9)
    }

    @Test func theSnapshotCarriesTheEpochThroughItsPayload() throws {
        var state = CoordinatorState(startedAt: Self.noon)
        state.apply(.started(epoch: 7, at: Self.noon))
        let payload = state.encodedSnapshot(at: Self.noon)
        #expect(payload.first == 4, "format 4")
        var loaded = CoordinatorState(startedAt: Self.noon)
        try loaded.load(snapshot: payload)
        #expect(loaded.highestRecordedEpoch == 7)
        loaded.apply(.started(epoch: 8, at: Self.noon))
        #expect(loaded.highestRecordedEpoch == 8)
    }

    /// Found by the snapshot fuzz target: a crafted format-3 snapshot whose reminder's next
    /// instant (or last firing) is a NaN decoded into a state not equal to itself. Refused.
    @Test(arguments: [(Double.nan, false), (Double.infinity, false), (-Double.infinity, true), (Double.nan, true)])
    func aSnapshotReminderWithANonFiniteInstantIsRefused(value: Double, asLastFiring: Bool) throws {
        let reminder = Reminder(id: "nan", recipient: "alice", content: Content(body: "x"), trigger: Trigger(start: .instant(Self.noon)))
        var snapshot = CoordinatorSnapshot(unsettled: [], deadLetters: [], nextEventSeq: 1, events: [])
        let instant = Date(timeIntervalSinceReferenceDate: value)
        snapshot.reminders = [
            CoordinatorSnapshot.ReminderRecord(
                reminderBytes: reminder.binaryEncoded(), id: "nan", nextIndex: 0, nextFireAt: asLastFiring ? Self.noon : instant,
                armedAt: nil, state: .pending, deliveredCount: 0, lastFiredAt: asLastFiring ? instant : nil)
        ]
        var loaded = CoordinatorState(startedAt: Self.noon)
        #expect(throws: WireError.self) { try loaded.load(snapshot: snapshot.encodedPayload()) }
        snapshot.reminders[0].nextFireAt = Self.noon
        snapshot.reminders[0].lastFiredAt = nil
        try loaded.load(snapshot: snapshot.encodedPayload())
        #expect(loaded.entries.count == 1, "the same record with finite instants loads")
    }

    @Test func aFormatThreeSnapshotWithoutAnEpochStillLoads() throws {
        let snapshot = CoordinatorSnapshot(unsettled: [], deadLetters: [], nextEventSeq: 1, events: [])
        let payload = snapshot.encodedPayload()
        #expect(!String(decoding: payload, as: UTF8.self).contains("\"epoch\""), "written as before epochs were recorded")
        var loaded = CoordinatorState(startedAt: Self.noon)
        try loaded.load(snapshot: payload)
        #expect(loaded.highestRecordedEpoch == 0)
    }
}
