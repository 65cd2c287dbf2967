import ChimeClient
import ChimeCommandLine
import ChimeCoordinator
import ChimeJournal
import ChimeRuntime
import ChimeSecurity
import ChimeWire
import Foundation

/// `chime shards map|move|abort|rebalance`: the shard map and live slot moves.
enum ShardsCommand: Command {
    static let spec = CommandSpec(
        name: "shards",
        summary: "Show the shard map; move slots between live shards (this process is the mover).",
        usage: """
            chime shards map [--json]
                   chime shards move SLOTS --to SHARD [--batch-slots N] [--id MOVE] [--pause-ms MS] [--timeout SECONDS] [--json]
                   chime shards abort MOVE [--timeout SECONDS] [--json]
                   chime shards rebalance [--dry-run] [--timeout SECONDS] [--json]
            """,
        options: [
            OptionSpec(name: "json", value: nil, help: "Print one JSON object."),
            OptionSpec(name: "to", value: "SHARD", help: "move: the target shard."),
            OptionSpec(name: "id", value: "MOVE", help: "move: the move's id (default: the open move of these slots, else a new one; with several batches -<n> is added)."),
            OptionSpec(name: "batch-slots", value: "N", help: "move: slots per move, run one after another (default 64): each move's slice must fit in one request (coordinator.maxRequestBytes)."),
            OptionSpec(name: "pause-ms", value: "MS", help: "move: how long the source refuses the slots' writes while it hands over (default 200)."),
            OptionSpec(name: "timeout", value: "SECONDS", help: "move, abort, rebalance: the bound of every wait (default 600): a move not adopted by its target by then is aborted; after a decision the shards get 5 s more to follow it."),
            OptionSpec(name: "dry-run", value: nil, help: "rebalance: print the plan, move nothing."),
            OptionSpec(name: "store", value: "DIR", help: "Without cluster.register: use the map register 'chime up --shards' keeps in DIR/map.json (default store.directory, .chime/store)."),
        ] + CommonOptions.specs,
        details: """
            map        each shard's slot ranges, slot count and reminder count, and the moves open
                       in the map register.
            move       SLOTS like 100-199,300: opens the move in the map register (cluster.register),
                       has the source and the target journal it, pauses the slots' writes briefly
                       (clients get try_again and retry) until the source hands over, ships the
                       slots' final slice, commits in the register once the target made it durable,
                       and waits until the source released and the target completed; one move per
                       --batch-slots slots of one source, one after another (slots of several
                       shards make one move per source). Progress (slots/s, reminders/s) on stderr.
                       Killed, a rerun with the same SLOTS and --to first finishes every decided
                       move a shard still holds, then resumes the open one and skips the slots
                       already moved; past --timeout before the target adopted, a move is aborted
                       and the source keeps its slots. Exit 0 when every move committed and both
                       shards followed, 1 otherwise (a shard that has not followed a decision yet
                       is named; it follows by itself at its next read of the register).
            abort      aborts an open move (before its commit) and waits until both shards followed.
            rebalance  plans moves of slot ranges from the fullest shard (by reminders) to the
                       emptiest until each is within 5% of the mean, then runs them one by one.
            Every command but map needs a map register: cluster.register, else the one 'chime up --shards'
            keeps in its store (DIR/map.json, with --store DIR or store.directory); map falls back to the
            cluster section.
            """)

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard let action = arguments.positionals.first else { throw UsageError("give map, move, abort or rebalance") }
        var configuration = try CommonOptions.configuration(arguments)
        if let store = arguments.value("store") { configuration.store.directory = store }
        let context = try ShardsContext(configuration)
        switch action {
        case "map": return try map(context, json: arguments.has("json"))
        case "move": return try move(arguments, context)
        case "abort": return try abort(arguments, context)
        case "rebalance": return try rebalance(arguments, context)
        default: throw UsageError("unknown shards action '\(action)'; give map, move, abort or rebalance")
        }
    }

    static func map(_ context: ShardsContext, json: Bool) throws -> Int32 {
        let map = try context.currentMap()
        let record = try context.register.map { try $0.read() } ?? nil
        var rows: [[String: Any]] = []
        var lines = ["shard  slots  reminders  ranges"]
        for shard in map.shards.sorted(by: { $0.id < $1.id }) {
            let slots = shard.slots.reduce(0) { $0 + max(0, $1.last - $1.first + 1) }
            let reminders = (try? context.status(of: shard.id, in: map))?.reminders
            let ranges = shard.slots.map { $0.first == $0.last ? "\($0.first)" : "\($0.first)-\($0.last)" }.joined(separator: ",")
            rows.append(["shard": shard.id, "slots": slots, "reminders": reminders as Any? ?? NSNull(), "ranges": ranges])
            lines.append("\(String(shard.id).padding(toLength: 7, withPad: " ", startingAt: 0))\(String(slots).padding(toLength: 7, withPad: " ", startingAt: 0))\((reminders.map(String.init) ?? "down").padding(toLength: 11, withPad: " ", startingAt: 0))\(ranges)")
        }
        let open = (record?.open.values.sorted { $0.id < $1.id } ?? []).map(\.description)
        if json {
            output(jsonLine(["ok": true, "result": [
                "mapEpoch": map.mapEpoch, "slotCount": map.slotCount, "shards": rows, "openMoves": open,
                "registerVersion": record.map { NSNumber(value: $0.version) } as Any? ?? NSNull(),
            ]]))
        } else {
            output("map epoch \(map.mapEpoch), \(map.slotCount) slots\(record.map { ", register version \($0.version)" } ?? "")")
            for line in lines { output(line) }
            for move in open { output("open: \(move)") }
        }
        return 0
    }

    static func abort(_ arguments: Arguments, _ context: ShardsContext) throws -> Int32 {
        guard arguments.positionals.count == 2 else { throw UsageError("give the move's id: chime shards abort MOVE") }
        let register = try context.requireRegister()
        let id = SlotMoveID(arguments.positionals[1])
        guard let record = try register.read(), let move = record.open[id] ?? nil else {
            throw UsageError("no open move \(id) in the map register")
        }
        try context.requireOperator(shards: [move.source, move.target], in: record.map)
        if let aborted = record.aborting(id) { _ = try register.compareAndSwap(expectedVersion: record.version, aborted) }
        var driver = context.driver(register)
        driver.settleGrace = try timeoutArgument(arguments)
        let result = try driver.run(move, deadline: .distantPast)
        report(move, result: result, reminders: nil, seconds: 0, json: arguments.has("json"))
        for line in unsettledLines(move, result) { FileHandle.standardError.write(Data("chime: \(line)\n".utf8)) }
        return result.outcome == .aborted && result.isSettled ? 0 : 1
    }

    static func report(_ move: SlotMove, result: SlotMoveDriver.Result, reminders: Int?, seconds: Double, json: Bool, brief: Bool = false) {
        let committed = if case .committed = result.outcome { true } else { false }
        let perSecond = { (count: Int) in seconds > 0 ? Double(count) / seconds : 0 }
        if json {
            output(jsonLine(["ok": true, "result": [
                "move": move.id.rawValue, "source": move.source, "target": move.target, "slots": move.slots.count,
                "outcome": committed ? "committed" : "aborted", "settled": result.isSettled, "reminders": reminders as Any? ?? NSNull(),
                "seconds": seconds, "slotsPerSecond": perSecond(move.slots.count), "remindersPerSecond": perSecond(reminders ?? 0),
            ]]))
        } else if brief {
            output("\(move): \(committed ? "committed" : "aborted")\(reminders.map { ", \($0) reminders" } ?? "")")
        } else {
            output("\(move): \(committed ? "committed" : "aborted") after \(String(format: "%.2f", seconds)) s"
                + (committed ? String(format: " (%.1f slots/s, %.0f reminders/s)", perSecond(move.slots.count), perSecond(reminders ?? 0)) : ""))
        }
    }
}

/// What the shards commands share: the configuration's register, the current map, and
/// operator control clients of each shard.
final class ShardsContext {
    let configuration: ChimeConfiguration
    let register: (any SlotMapRegistering)?
    let curve: CurveClientKeys?
    private var clients: [String: ControlClient] = [:]

    init(_ configuration: ChimeConfiguration) throws {
        self.configuration = configuration
        register = try MapRegisterOptions.register(configuration)
            ?? MapRegisterOptions.localRegister(storeDirectory: configuration.store.directory)
        curve = try CommonOptions.clientKeys(configuration, role: .operator)
    }

    func requireRegister() throws -> any SlotMapRegistering {
        guard let register else {
            throw ConfigurationError(
                "cluster.register: moving slots needs the map register (a path or configmap:NAME in the cluster section, or the \(configuration.store.directory)/\(MapRegisterOptions.localRegisterName) that 'chime up --shards' writes)")
        }
        return register
    }

    func currentMap() throws -> ShardMap {
        if let map = try MapRegisterOptions.currentMap(configuration) { return map }
        do throws(WireError) {
            if let map = try register?.read()?.map { return map }
        } catch {
            throw ConfigurationError("cluster.register: \(error.message)")
        }
        throw ConfigurationError(
            "cluster: no shards are configured, and \(configuration.store.directory) holds no map register ('chime up --shards N' writes one there; --store DIR names another)")
    }

    /// A shard's answer to the move step `request`, through its control endpoint in `map`.
    func send(_ shard: Int, _ request: SlotMoveRequest, in map: ShardMap) throws -> SlotMoveStatus {
        guard let endpoint = map.shard(id: shard)?.endpoints.control else { throw WireError(.notFound, "no shard \(shard) in the map") }
        let client: ControlClient
        if let known = clients[endpoint] {
            client = known
        } else {
            client = try ControlClient(
                endpoint: endpoint, timeout: .milliseconds(configuration.client.requestTimeoutMilliseconds), retries: 1, curve: curve)
            clients[endpoint] = client
        }
        let reply = try client.send(ControlRequest(requestId: UUID().uuidString, command: .move(request)), expecting: SlotMoveStatus.self)
        guard let status = reply.result else { throw reply.error ?? WireError(.malformed, "the move step's reply has no result") }
        return status
    }

    func status(of shard: Int, in map: ShardMap) throws -> SlotMoveStatus { try send(shard, .status(), in: map) }

    /// Asks each of `shards` for its move status and fails when one refuses this process's
    /// key the `move` op (only the operator role may move slots), before anything is written
    /// to the register. A shard that does not answer is passed over (the move waits for it).
    /// - Throws: `ConfigurationError` naming the shard and its refusal.
    func requireOperator(shards: [Int], in map: ShardMap) throws {
        for shard in shards {
            do {
                _ = try status(of: shard, in: map)
            } catch let error as WireError where error.code == .forbidden || error.code == .unauthenticated {
                throw ConfigurationError("shard \(shard) refused the move op (\(error.message)): moving slots needs the operator role's key (--key, or security.keys)")
            } catch {
                continue
            }
        }
    }

    /// A driver whose shards are reached through the register's current map.
    func driver(_ register: any SlotMapRegistering) -> SlotMoveDriver {
        SlotMoveDriver(register: register) { [self] shard, request in
            let map = try register.read()?.map ?? currentMap()
            return try send(shard, request, in: map)
        }
    }
}
