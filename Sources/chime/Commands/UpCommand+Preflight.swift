import ChimeCommandLine
import ChimeCoordinator
import ChimeRuntime
import ChimeStore
import ChimeWire
import Foundation

/// `chime up` refuses to start beside a cluster already running: before it starts anything it
/// checks each store's lock and every port its children and dashboard would listen on.
extension UpCommand {
    /// One place `up` will listen: `127.0.0.1:7700` and what listens there (`control`).
    struct PlannedPort {
        var address: String
        var role: String
    }

    /// The ports one coordinator's block uses: its five ZeroMQ bind endpoints (TCP only) and
    /// its HTTP address (unless `off`).
    static func plannedPorts(bind endpoints: [(role: String, bind: String)], http: String?, shard: Int?) -> [PlannedPort] {
        let suffix = shard.map { " of shard \($0)" } ?? ""
        var ports: [PlannedPort] = []
        for (role, bind) in endpoints where bind.hasPrefix("tcp://") {
            var address = String(bind.dropFirst("tcp://".count))
            // ZeroMQ's "every interface": the probe binds the same.
            if address.hasPrefix("*:") { address = "0.0.0.0" + address.dropFirst() }
            ports.append(PlannedPort(address: address, role: role + suffix))
        }
        if let http, http != "off" { ports.append(PlannedPort(address: http, role: "HTTP" + suffix)) }
        return ports
    }

    /// The dashboard's address when `up` runs one (`--dashboard`, else base + 6).
    static func plannedDashboard(_ arguments: Arguments, base: Int) -> [PlannedPort] {
        guard !arguments.has("no-dashboard") else { return [] }
        let address = arguments.value("dashboard") ?? "127.0.0.1:\(base + dashboardPortOffset)"
        return [PlannedPort(address: address, role: "dashboard; --no-dashboard or --dashboard HOST:PORT moves it")]
    }

    /// The bind endpoints of `configuration` by role.
    static func bindEndpoints(_ configuration: ChimeConfiguration) -> [(role: String, bind: String)] {
        let endpoints = configuration.endpoints
        return [
            ("control", endpoints.control.bind), ("dispatch", endpoints.dispatch.bind), ("results", endpoints.results.bind),
            ("events", endpoints.events.bind), ("events-ingest", endpoints.eventsIngest.bind),
        ]
    }

    /// Throws when one of `stores` is locked (`already running (pid N)`, the pid its `LOCK`
    /// names) or one of `ports` has a listener (`already running: 127.0.0.1:7700 (control) is
    /// in use`). Stores `none` are skipped.
    /// - Throws: `RuntimeFailure` (exit 1) as above; `JournalError` when a `LOCK` cannot be read.
    static func refuseWhenRunning(stores: [String], ports: [PlannedPort], hint: String) throws {
        for store in stores where store != "none" {
            let directory = URL(fileURLWithPath: store)
            guard try StoreLock.isHeld(directory: directory) else { continue }
            let holder = StoreLock.recordedHolder(of: directory).map { "pid \($0)" } ?? "its pid unrecorded"
            throw RuntimeFailure("already running (\(holder)): the store \(store) is locked; stop that cluster first, or give another --store and --port-base")
        }
        for port in ports where isListening(port.address) {
            throw RuntimeFailure("already running: \(port.address) (\(port.role)) is in use; \(hint)")
        }
    }

    /// What in the store directory `directory` disagrees with running `shards` coordinators
    /// on it, one sentence each (empty when nothing does): a map register naming another
    /// number of shards, a one-shard store beside the shard folders, or shard folders of
    /// another count. `register` is the register path `up` uses (`""` or `configmap:`: none
    /// read). The cluster still starts; these reminders would otherwise go unserved unnoticed.
    /// - Throws: `ConfigurationError` when the register exists but cannot be read.
    static func storeMismatches(_ directory: String, shards: Int, register: String) throws -> [String] {
        let folder = URL(fileURLWithPath: directory)
        let fileManager = FileManager.default
        let shardFolders = ((try? fileManager.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasPrefix("shard-") && Int($0.dropFirst("shard-".count)) != nil }
        var mismatches: [String] = []
        if shards == 1 {
            if !shardFolders.isEmpty {
                mismatches.append(
                    "\(directory) holds the stores of a sharded cluster (\(shardFolders.count) shard folders); one coordinator does not serve their reminders: run 'chime up --shards \(shardFolders.count)' for them")
            }
            return mismatches
        }
        var registerNamed = false
        if !register.isEmpty, !register.hasPrefix(MapRegisterOptions.configMapPrefix), fileManager.fileExists(atPath: register) {
            registerNamed = true
            let record: SlotMapRecord?
            do throws(WireError) {
                record = try SlotMapRegisterFile(path: register).read()
            } catch {
                throw ConfigurationError("cluster.register: \(error.message)")
            }
            if let map = record?.map, map.shards.count != shards {
                mismatches.append(
                    "the map register \(register) names \(map.shards.count) shards, not \(shards) (--shards): its map wins, so a shard it does not name refuses slots it gives to others and a shard left out is not served; run 'chime up --shards \(map.shards.count)'")
            }
        }
        if fileManager.fileExists(atPath: folder.appendingPathComponent("LOCK").path) {
            mismatches.append(
                "\(directory) holds a one-shard store: --shards \(shards) keeps its stores in \(directory)/shard-0…, so its reminders are not served; 'chime up --store \(directory)' without --shards serves them")
        }
        if !registerNamed, !shardFolders.isEmpty, shardFolders.count != shards {
            mismatches.append("\(directory) holds the stores of \(shardFolders.count) shards, not \(shards) (--shards)")
        }
        return mismatches
    }

    /// Whether something listens at `HOST:PORT` (an address literal, IPv6 in brackets):
    /// `ListenAddress.isFree` of its `tcp://` endpoint, the probe a stopping coordinator uses
    /// for its successor. An address it cannot tell about is not checked: the child that
    /// binds it reports it.
    static func isListening(_ text: String) -> Bool {
        ListenAddress.isFree("tcp://" + text) == false
    }
}
