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
        let snapshot = state.makeSnapshot(at: Self.noon)
        #expect(snapshot.epoch == 7)
        #expect(snapshot.formatVersion == 3)
        let decoded = try CoordinatorSnapshot.decode(payload: snapshot.encodedPayload())
        #expect(decoded.epoch == 7)
        var loaded = CoordinatorState(startedAt: Self.noon)
        try loaded.load(decoded)
        #expect(loaded.highestRecordedEpoch == 7)
        loaded.apply(.started(epoch: 8, at: Self.noon))
        #expect(loaded.highestRecordedEpoch == 8)
    }

    @Test func aFormatThreeSnapshotWithoutAnEpochStillLoads() throws {
        var snapshot = CoordinatorState(startedAt: Self.noon).makeSnapshot(at: Self.noon)
        snapshot.epoch = nil
        let payload = snapshot.encodedPayload()
        #expect(!String(decoding: payload, as: UTF8.self).contains("\"epoch\""), "written as before epochs were recorded")
        let decoded = try CoordinatorSnapshot.decode(payload: payload)
        #expect(decoded.epoch == nil)
        var loaded = CoordinatorState(startedAt: Self.noon)
        try loaded.load(decoded)
        #expect(loaded.highestRecordedEpoch == 0)
    }
}
