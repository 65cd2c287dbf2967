import ChimeCore
import ChimeWire
import Foundation

/// The map register the service follows: the register itself, how often its stamp is
/// compared, and the reader thread while `run` serves.
struct MapFollowing {
    /// The cluster's map register (`cluster.register`); `nil`: the map is the configured one.
    var register: (any SlotMapRegistering)?
    /// How often the register's stamp is compared.
    var pollInterval = MapRegisterFollower.defaultInterval
    /// The register's reader thread, while `run` serves with a register.
    var follower: MapRegisterFollower?
}

/// The map register, as the coordinator follows it: a reader thread (`MapRegisterFollower`)
/// compares the register's stamp (a file's size, mtime and inode; a ConfigMap's
/// `resourceVersion`, one GET bounded by the access's timeout) about once a second and, when
/// it changed, reads the record; the loop hands the newest record read to the state at the
/// start of each turn (`CoordinatorState.onMapRead`). A commit of a slot move in the
/// register thus reaches the source (which then answers `wrong_shard` for the slots) and the
/// target within about a second, and a slow or hung API server delays only that thread,
/// never the loop's firings, pings and writes. Without `mapRegister` nothing is read.
///
/// A `move` step that reads the record waits for a fresh read: the state answers it
/// `try_again` and asks for one (`.readMapRegister`, `CoordinatorState+FreshMapRead.swift`).
extension CoordinatorService {
    /// Starts the register's reader thread (when there is a register).
    func startMapRegisterFollower() {
        guard let register = mapFollowing.register, mapFollowing.follower == nil else { return }
        let follower = MapRegisterFollower(register: register, interval: mapFollowing.pollInterval)
        mapFollowing.follower = follower
        state.onMapRegisterFollowed(name: follower.qualifiedName)
    }

    /// Stops the reader thread (see `MapRegisterFollower.stop`).
    func stopMapRegisterFollower() {
        guard let follower = mapFollowing.follower else { return }
        mapFollowing.follower = nil
        state.onMapRegisterUnfollowed()
        if !follower.stop() {
            logger.info("map register \(follower.qualifiedName): a read was still under way at the stop; its thread ends when the read does")
        }
    }

    /// Hands what the reader thread read to the state (the newest record and the fresh reads
    /// finished), and logs its read error and a change of the map's epoch.
    func takeMapReads() {
        guard let follower = mapFollowing.follower else { return }
        let taken = follower.handoff.take()
        if let error = taken.error {
            let repeated = error.failedReads > 1 ? " (\(error.failedReads) failed reads since the last report)" : ""
            logger.warning(
                "map register \(follower.qualifiedName) does not read (keeping map epoch \(state.configuration.shardMap?.mapEpoch ?? 1))\(repeated): \(error.message)")
        }
        let previous = state.mapRecord?.map.mapEpoch
        let isAdopted = state.onMapRead(record: taken.record, freshReadsDone: taken.freshReadsDone)
        guard let record = taken.record else { return }
        if isAdopted, let previous, previous != record.map.mapEpoch {
            logger.info("map register \(follower.qualifiedName): map epoch \(previous) → \(record.map.mapEpoch)")
        }
        // `chime_shard_info{map_epoch}` follows the map the loop serves under.
        if let epoch = state.configuration.shardMap?.mapEpoch { probe.noteMapEpoch(epoch) }
    }

    /// Asks the reader thread for a read that starts now (`.readMapRegister`).
    func requestFreshMapRead() {
        guard let follower = mapFollowing.follower else { return }
        _ = follower.requestFreshRead()
    }
}
