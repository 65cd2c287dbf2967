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

    @Test func aFormatThreeSnapshotWithoutAnEpochStillLoads() throws {
        let snapshot = CoordinatorSnapshot(unsettled: [], deadLetters: [], nextEventSeq: 1, events: [])
        let payload = snapshot.encodedPayload()
        #expect(!String(decoding: payload, as: UTF8.self).contains("\"epoch\""), "written as before epochs were recorded")
        var loaded = CoordinatorState(startedAt: Self.noon)
        try loaded.load(snapshot: payload)
        #expect(loaded.highestRecordedEpoch == 0)
    }
}
