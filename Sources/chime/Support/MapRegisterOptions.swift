import ChimeCommandLine
import ChimeCoordinator
import ChimeRuntime
import ChimeWire
import Foundation

/// The `cluster.register` setting: the map register every process of a cluster reads the
/// current shard map from (`chime shards move` changes it). Either a file path, or
/// `configmap:NAME` (`configmap:NAMESPACE/NAME`) for a Kubernetes ConfigMap reached with the
/// pod's service account (`KubernetesAPIAccess.inCluster`: the `CHIME_KUBERNETES_*`
/// environment variables override the API server, token, CA bundle and namespace).
enum MapRegisterOptions {
    /// The prefix of a ConfigMap register.
    static let configMapPrefix = "configmap:"

    /// The configured register, `nil` without `cluster.register` or without a cluster.
    /// - Throws: `ConfigurationError` for a `configmap:` setting without a name, or outside a
    ///   pod without the overrides.
    static func register(_ configuration: ChimeConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> (any SlotMapRegistering)?
    {
        let setting = configuration.cluster.register
        guard configuration.cluster.isConfigured, !setting.isEmpty else { return nil }
        guard setting.hasPrefix(configMapPrefix) else { return SlotMapRegisterFile(path: setting) }
        let reference = setting.dropFirst(configMapPrefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard (1...2).contains(reference.count), reference.allSatisfy({ !$0.isEmpty }) else {
            throw ConfigurationError("cluster.register: '\(setting)' is not configmap:NAME or configmap:NAMESPACE/NAME")
        }
        do throws(WireError) {
            let access = try KubernetesAPIAccess.inCluster(environment: environment, namespace: reference.count == 2 ? reference[0] : nil)
            return SlotMapRegisterConfigMap(name: reference[reference.count - 1], access: access)
        } catch {
            throw ConfigurationError("cluster.register: \(error.message)")
        }
    }

    /// The register's record, created from `map` when it does not exist yet, with shard
    /// `shardID` joined to it when the configured map lists it with no slots.
    /// - Throws: `ConfigurationError` naming the register when it cannot be read or written.
    static func createIfAbsent(_ register: any SlotMapRegistering, map: ShardMap, joining shardID: Int) throws -> SlotMapRecord {
        do throws(WireError) {
            return try register.createIfAbsent(map: map, joining: shardID)
        } catch {
            throw ConfigurationError("cluster.register: \(error.message)")
        }
    }

    /// The name of the map register `chime up --shards` keeps in its store directory.
    static let localRegisterName = "map.json"

    /// The map register `chime up --shards` wrote in `storeDirectory`, when there is one:
    /// what `chime shards` uses when the configuration names no register, so it works from the
    /// directory `up` ran in without a hand-written `cluster` section.
    static func localRegister(storeDirectory: String) -> SlotMapRegisterFile? {
        guard let path = localRegisterPath(storeDirectory: storeDirectory), FileManager.default.fileExists(atPath: path) else {
            return nil
        }
        return SlotMapRegisterFile(path: path)
    }

    /// Where `chime up --shards` keeps its map register for the store `storeDirectory`
    /// (`DIR/map.json`, standardized); `nil` for an in-memory store (`none`).
    static func localRegisterPath(storeDirectory: String) -> String? {
        guard storeDirectory != "none" else { return nil }
        return URL(fileURLWithPath: storeDirectory).appendingPathComponent(localRegisterName).standardizedFileURL.path
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
