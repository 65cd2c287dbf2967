import ChimeCommandLine
import ChimeCoordinator
import ChimeRuntime
import ChimeWire
import Foundation

/// The `cluster.register` setting: the map register file every process of a cluster reads
/// the current shard map from (`chime shards move` changes it).
enum MapRegisterOptions {
    /// The configured register, `nil` without `cluster.register` or without a cluster.
    static func register(_ configuration: ChimeConfiguration) throws -> SlotMapRegisterFile? {
        let path = configuration.cluster.register
        guard configuration.cluster.isConfigured, !path.isEmpty else { return nil }
        return SlotMapRegisterFile(path: path)
    }

    /// The register's record, created from `map` when the file does not exist yet.
    /// - Throws: `ConfigurationError` naming the register when it cannot be read or written.
    static func createIfAbsent(_ register: SlotMapRegisterFile, map: ShardMap) throws -> SlotMapRecord {
        do throws(WireError) {
            return try register.createIfAbsent(map: map)
        } catch {
            throw ConfigurationError("cluster.register: \(error.message)")
        }
    }

    /// The cluster's current map: the register's when it is configured and exists, else the
    /// configured `cluster` section's (`nil`: no cluster).
    static func currentMap(_ configuration: ChimeConfiguration) throws -> ShardMap? {
        let configured = try ShardMap.configured(configuration.cluster)
        guard let register = try register(configuration) else { return configured }
        do throws(WireError) {
            return try register.read()?.map ?? configured
        } catch {
            throw ConfigurationError("cluster.register: \(error.message)")
        }
    }
}
