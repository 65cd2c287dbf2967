import ChimeCommandLine
import ChimeRuntime
import ChimeWire
import Foundation

/// `chime coordinator`'s choice of shard: `--shard ID`, else `$CHIME_SHARD`, else
/// `--shard-from-hostname` (the trailing `-<ordinal>` of the host name: the Kubernetes
/// StatefulSet pod `chime-coordinator-2` serves shard 2).
enum ShardOptions {
    static let specs: [OptionSpec] = [
        OptionSpec(name: "shard", value: "ID", help: "With a cluster section: serve this shard (its endpoints, its slots). Default: $CHIME_SHARD."),
        OptionSpec(name: "shard-from-hostname", value: nil, help: "Serve the shard named by the host name's trailing -<ordinal> (a StatefulSet pod chime-coordinator-2 serves shard 2)."),
    ]

    /// The cluster map and this coordinator's shard in it; `nil` without a `cluster` section
    /// and without a shard chosen (one coordinator owning every slot).
    /// - Throws: `ConfigurationError` for a map that does not validate or names no such shard;
    ///   `UsageError` for a shard id that is not a number, a shard chosen without a map, or a
    ///   map of several shards with none chosen.
    static func selection(_ arguments: Arguments, _ configuration: ChimeConfiguration) throws -> (map: ShardMap, id: Int)? {
        let map = try ShardMap.configured(configuration.cluster)
        let chosen = try chosenShard(arguments)
        guard let map else {
            if let chosen, chosen != 0 {
                throw UsageError("shard \(chosen) was chosen, but the configuration has no cluster section (one coordinator is shard 0)")
            }
            return nil
        }
        if let chosen {
            guard map.shard(id: chosen) != nil else {
                throw ConfigurationError("cluster: there is no shard \(chosen) (shards: \(map.shards.map { String($0.id) }.joined(separator: ", ")))")
            }
            return (map, chosen)
        }
        guard map.shards.count == 1, let only = map.shards.first else {
            throw UsageError("the cluster has \(map.shards.count) shards: choose one with --shard ID, CHIME_SHARD or --shard-from-hostname")
        }
        return (map, only.id)
    }

    private static func chosenShard(_ arguments: Arguments) throws -> Int? {
        if let text = arguments.value("shard") { return try parse(text, source: "--shard") }
        if let text = ProcessInfo.processInfo.environment["CHIME_SHARD"], !text.isEmpty {
            return try parse(text, source: "CHIME_SHARD")
        }
        guard arguments.has("shard-from-hostname") else { return nil }
        let host = hostName()
        guard let ordinal = ordinal(ofHost: host) else {
            throw UsageError("--shard-from-hostname: host name '\(host)' does not end in -<ordinal>")
        }
        return ordinal
    }

    private static func parse(_ text: String, source: String) throws -> Int {
        guard let id = Int(text), (0...1_000_000).contains(id) else {
            throw UsageError("\(source) must be a shard id (0 or more), not '\(text)'")
        }
        return id
    }

    /// The ordinal at the end of a host name's first label: `chime-coordinator-2.chime` → 2.
    static func ordinal(ofHost host: String) -> Int? {
        let label = host.split(separator: ".", maxSplits: 1).first.map(String.init) ?? host
        guard let dash = label.lastIndex(of: "-") else { return nil }
        let digits = label[label.index(after: dash)...]
        guard !digits.isEmpty, digits.count <= 7, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        return Int(digits)
    }

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
