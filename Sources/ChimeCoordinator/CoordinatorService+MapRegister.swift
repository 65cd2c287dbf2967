import ChimeCore
import ChimeWire
import Foundation

/// The map register, as the coordinator follows it: about once a second the loop compares the
/// register's stamp (a file's size, mtime and inode; a ConfigMap's `resourceVersion`, one GET
/// bounded by the access's timeout) with the last one and, when it changed, reads the record
/// and adopts it (`CoordinatorState.adoptMapRecord`). A commit of a slot move in the register
/// thus reaches the source (which then answers `wrong_shard` for the slots) and the target
/// within about a second. Without `mapRegister` nothing is read.
extension CoordinatorService {
    /// How often the register's stamp is compared.
    static let mapRegisterPollInterval = Duration.seconds(1)

    /// Reads the register when its stamp changed and the interval passed (or on the first turn).
    func pollMapRegister(at now: ContinuousClock.Instant) {
        guard let mapRegister else { return }
        if let last = mapRegisterPoll, now - last.at < Self.mapRegisterPollInterval { return }
        let stamp = mapRegister.stamp()
        defer { mapRegisterPoll = (stamp, now) }
        guard mapRegisterPoll == nil || stamp != mapRegisterPoll?.stamp else { return }
        refreshMapRecord()
    }

    /// Reads the register now and adopts its record (logging a register that does not read).
    func refreshMapRecord() {
        guard let mapRegister else { return }
        do {
            guard let record = try mapRegister.read() else { return }
            let previous = state.mapRecord?.map.mapEpoch
            if state.adoptMapRecord(record), let previous, previous != record.map.mapEpoch {
                logger.info("map register \(mapRegister.qualifiedName): map epoch \(previous) → \(record.map.mapEpoch)")
            }
        } catch {
            logger.warning("map register \(mapRegister.qualifiedName) does not read (keeping map epoch \(state.configuration.shardMap?.mapEpoch ?? 1)): \(error.message)")
        }
    }
}
