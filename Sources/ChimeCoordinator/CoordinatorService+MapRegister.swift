import ChimeCore
import ChimeWire
import Foundation

/// The map register, as the coordinator follows it: a reader thread (`MapRegisterFollower`)
/// compares the register's stamp (a file's size, mtime and inode; a ConfigMap's
/// `resourceVersion`, one GET bounded by the access's timeout) about once a second and, when
/// it changed, reads the record; the loop adopts the newest record read at the start of each
/// turn (`CoordinatorState.adoptMapRecord`). A commit of a slot move in the register thus
/// reaches the source (which then answers `wrong_shard` for the slots) and the target within
/// about a second, and a slow or hung API server delays only that thread, never the loop's
/// firings, pings and writes. Without `mapRegister` nothing is read.
///
/// A `move` step that reads the record (`begin`, `follow`, `release`) must see the register
/// as it is now (a commit its mover just made): it is answered `try_again` until a read that
/// started after it arrived has been adopted (`awaitFreshMapRead`). The mover's client
/// resends the same request (same `requestId`) after `retryAfterMs`, so it waits out one
/// register read, however long, without the loop waiting at all.
extension CoordinatorService {
    /// How long a `move` step waiting for a fresh read is told to wait before it asks again
    /// the first time, in milliseconds: a file register reads in well under a millisecond, a
    /// ConfigMap in a few on a healthy API server. Each later `try_again` doubles it, up to
    /// ``freshMapReadMaximumRetryMilliseconds``: a client waits out 20 of them
    /// (`ControlClient.maximumRateLimitedWaits`), about 13 s in all, longer than two reads at
    /// the API server's 5 s timeout, so a slow read never outlasts the step's patience.
    static let freshMapReadRetryMilliseconds = 5
    /// The longest `retryAfterMs` of a step waiting for a fresh read, in milliseconds.
    static let freshMapReadMaximumRetryMilliseconds = 1_000
    /// How long a `move` step's fresh-read ticket is kept for its retries.
    static let freshMapReadTicketLifetime = Duration.seconds(60)

    /// Starts the register's reader thread (when there is a register).
    func startMapRegisterFollower() {
        guard let mapRegister, mapRegisterFollower == nil else { return }
        mapRegisterFollower = MapRegisterFollower(register: mapRegister, interval: mapRegisterPollInterval)
    }

    /// Stops the reader thread (see `MapRegisterFollower.stop`).
    func stopMapRegisterFollower() {
        guard let follower = mapRegisterFollower else { return }
        mapRegisterFollower = nil
        freshMapReads.removeAll()
        if !follower.stop() {
            logger.info("map register \(follower.qualifiedName): a read was still under way at the stop; its thread ends when the read does")
        }
    }

    /// Adopts the newest record the reader thread handed over, and logs its read error.
    func adoptHandedMapRecord() {
        guard let follower = mapRegisterFollower else { return }
        let taken = follower.handoff.take()
        freshMapReadsDone = taken.freshReadsDone
        if let error = taken.error {
            let repeated = error.failedReads > 1 ? " (\(error.failedReads) failed reads since the last report)" : ""
            logger.warning(
                "map register \(follower.qualifiedName) does not read (keeping map epoch \(state.configuration.shardMap?.mapEpoch ?? 1))\(repeated): \(error.message)")
        }
        guard let record = taken.record else { return }
        let previous = state.mapRecord?.map.mapEpoch
        if state.adoptMapRecord(record), let previous, previous != record.map.mapEpoch {
            logger.info("map register \(follower.qualifiedName): map epoch \(previous) → \(record.map.mapEpoch)")
        }
        // `chime_shard_info{map_epoch}` follows the map the loop serves under.
        if let epoch = state.configuration.shardMap?.mapEpoch { probe.noteMapEpoch(epoch) }
    }

    /// For a `move` step that reads the map record: `nil` once a register read that started
    /// after the step first arrived was adopted (the step is then decided on it), else the
    /// `try_again` to answer while that read is asked for or under way. Steps are told apart
    /// by `requestId` (the client resends the same one), or by connection without one.
    func awaitFreshMapRead(step: String, requestId: String?, from client: ClientAddress) -> WireError? {
        guard let follower = mapRegisterFollower, SlotMoveStep(rawValue: step)?.readsMapRecord == true else { return nil }
        // What arrived since the turn began, so a read that just ended counts now.
        adoptHandedMapRecord()
        let key = requestId.map { client.requestLogKey($0) } ?? client.routing.map { $0.base64EncodedString() }.joined(separator: ".")
        let now = ContinuousClock.now
        var refusals = 0
        if let waiting = freshMapReads[key] {
            if freshMapReadsDone >= waiting.ticket {
                freshMapReads[key] = nil
                return nil
            }
            refusals = waiting.refusals
            freshMapReads[key]?.refusals += 1
        } else {
            freshMapReads = freshMapReads.filter { now - $0.value.since < Self.freshMapReadTicketLifetime }
            freshMapReads[key] = (follower.requestFreshRead(), now, 1)
        }
        let milliseconds = Self.freshMapReadRetryMilliseconds(afterRefusals: refusals)
        return WireError(
            .tryAgain, "reading map register \(follower.qualifiedName) for this move step; retry in \(milliseconds) ms",
            retryAfterMilliseconds: milliseconds)
    }

    /// The `retryAfterMs` of a step refused `refusals` times before: 5, 10, 20, … 1,000 ms.
    static func freshMapReadRetryMilliseconds(afterRefusals refusals: Int) -> Int {
        min(freshMapReadMaximumRetryMilliseconds, freshMapReadRetryMilliseconds << min(max(refusals, 0), 8))
    }
}

extension SlotMoveStep {
    /// Whether `CoordinatorState.moveStep` decides this step on the map record
    /// (`begin` and `follow` pass it on to the source's or target's rules).
    var readsMapRecord: Bool {
        switch self {
        case .begin, .follow: true
        case .status, .pause, .export, .import: false
        }
    }
}
