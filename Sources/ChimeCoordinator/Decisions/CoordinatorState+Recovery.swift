import ChimeCore
import ChimeStore
import ChimeWire
import Foundation

extension CoordinatorState {
    /// Ends recovery at `now`: firings made but not acknowledged wait for redelivery with
    /// their firing ids and attempt numbers, event seqs resume after the reserved block, and
    /// occurrences due before `now` count as misfires.
    ///
    /// Dispatch does not wait for the journal, so a firing handed out just before a crash may
    /// have no durable `fired` entry: its occurrence is then a misfire like any other due
    /// while the coordinator was down (fired late, same firing id, under `fireOnce`). Data of
    /// slots the map gave away outside a move is neither redelivered nor fired
    /// (``findUnservedData()``, here without a map register, else at its first read).
    public mutating func finishRecovery(at now: Date) {
        clocks.recoveredAt = now
        dispatch.nextEventSeq = max(dispatch.nextEventSeq, eventSeqReserved.saturatingAdding(1))
        // With a map register, the first read of it decides what waits (`adoptMapRecord`).
        guard !isAwaitingMapRecord else { return }
        let line = unsettled.values.filter { dispatch.inFlight[$0.firing.firingId] == nil }
            .sorted { ($0.firing.dueAt, $0.firing.firingId) < ($1.firing.dueAt, $1.firing.firingId) }
        dispatch.waiting.append(contentsOf: line)
        findUnservedData()
    }

    /// The durable state as a snapshot payload taken at `now` (``DurableState``'s encoding).
    public func encodedSnapshot(at now: Date = Date()) -> Data { durable.encodedSnapshot(takenAt: now) }

    /// Decodes a snapshot payload into an empty state (``DurableState/decodeSnapshot(_:seed:)``
    /// with this state's settings as the seed for an older format), then loads it.
    /// - Throws: `WireError(.invalidArgument)` for a payload that does not decode.
    public mutating func load(snapshot payload: Data) throws(WireError) {
        load(try DurableState.decodeSnapshot(payload, seed: durable.settings))
    }
}
