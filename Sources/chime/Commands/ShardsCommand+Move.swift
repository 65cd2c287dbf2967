import ChimeCommandLine
import ChimeCoordinator
import ChimeJournal
import ChimeRuntime
import ChimeWire
import Foundation

extension ShardsCommand {
    /// Slots like `100-199,300` (ranges inclusive), each within `0..<slotCount`.
    /// - Throws: `UsageError` naming the part that is not a slot or a range of them.
    static func parseSlots(_ text: String, slotCount: Int) throws -> Set<Int> {
        var slots = Set<Int>()
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            guard (1...2).contains(bounds.count), let first = bounds.first ?? nil, let last = bounds.last ?? nil,
                first >= 0, first <= last, last < slotCount
            else {
                throw UsageError("slots: '\(part)' is not a slot or a range FIRST-LAST within 0…\(slotCount - 1)")
            }
            slots.formUnion(first...last)
        }
        return slots
    }

    static func move(_ arguments: Arguments, _ context: ShardsContext) throws -> Int32 {
        guard arguments.positionals.count == 2 else { throw UsageError("give the slots: chime shards move SLOTS --to SHARD") }
        guard let targetText = arguments.value("to"), let target = Int(targetText) else { throw UsageError("--to SHARD is required (a shard id)") }
        let register = try context.requireRegister()
        guard let record = try register.read() else { throw ConfigurationError("cluster.register: \(register.qualifiedName) holds no record yet (start a coordinator first)") }
        let slots = try parseSlots(arguments.positionals[1], slotCount: record.map.slotCount)
        guard record.map.shard(id: target) != nil else { throw UsageError("--to: no shard \(target) in the map (epoch \(record.map.mapEpoch))") }
        let pause = try arguments.value("pause-ms").map { text -> Int in
            guard let value = Int(text), (1...60_000).contains(value) else { throw UsageError("--pause-ms must be 1…60000") }
            return value
        } ?? 200
        let timeout = try timeoutArgument(arguments)
        let batch = try arguments.value("batch-slots").map { text -> Int in
            guard let value = Int(text), value >= 1 else { throw UsageError("--batch-slots must be 1 or more") }
            return value
        } ?? 64
        let json = arguments.has("json")
        let started = Date()
        let deadline = started.addingTimeInterval(timeout)
        // Nothing is written before every shard of the move has accepted this process as an
        // operator (a refusal of a shard that does not answer is learnt later, with a retry).
        let sources = Set(slots.compactMap { record.map.ownerID(ofSlot: $0) }).subtracting([target])
        try context.requireOperator(shards: sources.union([target]).sorted(), in: record.map)
        let followed = try followDecidedMoves(context: context, register: register, deadline: deadline, json: json)
        var total = (moves: 0, slots: 0, reminders: 0, alreadyThere: 0)
        var failures: [String] = []
        var isAborted = false
        while !isAborted {
            guard let record = try register.read() else { throw ConfigurationError("cluster.register: \(register.qualifiedName) lost its record") }
            guard let move = nextMove(of: slots, to: target, batch: batch, id: arguments.value("id").map { SlotMoveID($0) }, index: total.moves, record: record) else { break }
            let (result, reminders, _) = try runMove(move, context: context, register: register, pauseMilliseconds: pause, deadline: deadline, json: json)
            total.moves += 1
            total.slots += move.slots.count
            total.reminders += reminders ?? 0
            if !json { report(move, result: result, reminders: reminders, seconds: 0, json: false, brief: true) }
            if result.outcome == .aborted { isAborted = true }
            failures += unsettledLines(move, result)
        }
        if let record = try register.read() { total.alreadyThere = slots.count - total.slots - slots.filter { record.map.ownerID(ofSlot: $0) != target }.count }
        let seconds = Date().timeIntervalSince(started)
        let perSecond = { (count: Int) in seconds > 0 ? Double(count) / seconds : 0 }
        for line in failures { FileHandle.standardError.write(Data("chime: \(line)\n".utf8)) }
        if json {
            output(jsonLine(["ok": true, "result": [
                "target": target, "slots": slots.count, "moves": total.moves, "moved": total.slots, "alreadyThere": max(0, total.alreadyThere),
                "outcome": isAborted ? "aborted" : "committed", "settled": failures.isEmpty, "followedEarlierMoves": followed,
                "reminders": total.reminders, "seconds": seconds,
                "slotsPerSecond": perSecond(total.slots), "remindersPerSecond": perSecond(total.reminders),
            ]]))
        } else {
            output(String(
                format: "%d slots to shard %d: %@ in %d moves (%d there already), %.2f s (%.1f slots/s, %.0f reminders/s)", slots.count, target,
                isAborted ? "aborted" : "moved", total.moves, max(0, total.alreadyThere), seconds, perSecond(total.slots), perSecond(total.reminders)))
        }
        return isAborted || !failures.isEmpty ? 1 : 0
    }

    /// `--timeout SECONDS` (default 600): the bound of every wait of a move command.
    static func timeoutArgument(_ arguments: Arguments) throws -> Double {
        try arguments.value("timeout").map { text -> Double in
            guard let value = Double(text), value > 0, value.isFinite else { throw UsageError("--timeout must be a number of seconds > 0") }
            return value
        } ?? 600
    }

    /// The next move that carries some of `slots` to `target`: an open move of the register
    /// into `target` of slots among them (a rerun resumes it), else a new one of up to `batch`
    /// slots of one source, in slot order (a range owned by several shards makes one move per
    /// source); `nil` when `target` owns them all.
    static func nextMove(of slots: Set<Int>, to target: Int, batch: Int, id: SlotMoveID?, index: Int, record: SlotMapRecord) -> SlotMove? {
        if let open = record.open.values.sorted(by: { $0.id < $1.id }).first(where: { $0.target == target && $0.slots.isSubset(of: slots) }) {
            return open
        }
        let moving = slots.filter { record.map.ownerID(ofSlot: $0) != target && record.openMove(covering: $0) == nil }.sorted()
        guard let first = moving.first, let source = record.map.ownerID(ofSlot: first) else { return nil }
        let chosen = Set(moving.lazy.filter { record.map.ownerID(ofSlot: $0) == source }.prefix(batch))
        let fresh = id.map { SlotMoveID(index == 0 ? $0.rawValue : "\($0.rawValue)-\(index)") }
            ?? SlotMoveID("move-\(Int(Date().timeIntervalSince1970 * 1000))-\(getpid())-\(first)")
        return SlotMove(id: fresh, slots: chosen, source: source, target: target, slotCount: record.map.slotCount)
    }

    /// Drives every move the register decided that a shard still holds in progress (a mover
    /// killed after the commit, a shard restarted from an older journal) to its end on both
    /// sides, before anything new: the source releases a committed move's slots (they never
    /// fire or list there again), the target completes it.
    /// - Returns: how many such moves were followed.
    static func followDecidedMoves(context: ShardsContext, register: any SlotMapRegistering, deadline: Date, json: Bool) throws -> Int {
        guard let record = try register.read() else { return 0 }
        var decided: [SlotMoveID: SlotMove] = [:]
        for shard in record.map.shards {
            guard let status = try? context.status(of: shard.id, in: record.map) else { continue }
            for move in status.ledger.outgoing.map(\.move) + status.ledger.incoming.map(\.move) where record.outcomes[move.id] != nil {
                decided[move.id] = move
            }
        }
        for move in decided.values.sorted(by: { $0.id < $1.id }) {
            let result = try context.driver(register).run(move, deadline: deadline)
            if !json { report(move, result: result, reminders: nil, seconds: 0, json: false, brief: true) }
            for line in unsettledLines(move, result) { FileHandle.standardError.write(Data("chime: \(line)\n".utf8)) }
        }
        return decided.count
    }

    /// A line per shard that had not followed a decided move.
    static func unsettledLines(_ move: SlotMove, _ result: SlotMoveDriver.Result) -> [String] {
        result.unsettled.sorted { $0.key < $1.key }.map { shard, why in
            "\(move.id): \(result.outcome == .aborted ? "aborted" : "committed") in the register, but shard \(shard) has not followed yet (\(why)); it follows by itself at its next read of the register"
        }
    }

    /// Drives one move, with a progress line on stderr unless `json`.
    static func runMove(
        _ move: SlotMove, context: ShardsContext, register: any SlotMapRegistering, pauseMilliseconds: Int, deadline: Date, json: Bool
    ) throws -> (SlotMoveDriver.Result, Int?, Double) {
        var driver = context.driver(register)
        driver.pause = Double(pauseMilliseconds) / 1000
        let started = Date()
        var reminders: Int?
        // On a terminal one line redrawn in place; into a file or pipe one line per step.
        let isTerminal = isatty(STDERR_FILENO) == 1
        var lastLabel: String?
        let result = try driver.run(move, deadline: deadline, progress: { progress in
            reminders = progress.reminders ?? reminders
            guard !json else { return }
            if !isTerminal {
                guard progress.action.label != lastLabel else { return }
                lastLabel = progress.action.label
            }
            let elapsed = max(0.001, Date().timeIntervalSince(started))
            let waiting = progress.refusals.sorted { $0.key < $1.key }.first.map { " (shard \($0.key): \($0.value.prefix(60)))" } ?? ""
            let line = String(
                format: isTerminal ? "\r%@: %@, %d slots, %@ reminders, %.1f s (%.1f slots/s, %.0f reminders/s)%@   "
                    : "%@: %@, %d slots, %@ reminders, %.1f s (%.1f slots/s, %.0f reminders/s)%@\n", move.id.rawValue,
                progress.action.label, move.slots.count, reminders.map(String.init) ?? "?", elapsed,
                Double(move.slots.count) / elapsed, Double(reminders ?? 0) / elapsed, waiting)
            FileHandle.standardError.write(Data(line.utf8))
        })
        if !json && isTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
        return (result, reminders, Date().timeIntervalSince(started))
    }

    /// A plan of moves that evens out reminders: from the fullest shard (by reminders) to the
    /// emptiest, the fullest's highest slots, as many as carry it toward the mean at its
    /// reminders per slot, until every shard is within 5% of the mean (at most 2 × shards moves).
    static func plan(map: ShardMap, reminders: [Int: Int]) -> [SlotMove] {
        var owned: [Int: [Int]] = [:]
        for shard in map.shards {
            owned[shard.id] = shard.slots.flatMap { range in range.first <= range.last ? Array(range.first...range.last) : [] }
        }
        var counts = reminders
        let total = counts.values.reduce(0, +)
        guard map.shards.count > 1, total > 0 else { return [] }
        let mean = Double(total) / Double(map.shards.count)
        var moves: [SlotMove] = []
        for index in 0..<(2 * map.shards.count) {
            guard let fullest = counts.max(by: { ($0.value, -$0.key) < ($1.value, -$1.key) }),
                let emptiest = counts.min(by: { ($0.value, $0.key) < ($1.value, $1.key) }),
                Double(fullest.value) > mean * 1.05 || Double(emptiest.value) < mean * 0.95,
                let slots = owned[fullest.key], slots.count > 1
            else { break }
            let perSlot = Double(fullest.value) / Double(slots.count)
            let wanted = min(Double(fullest.value) - mean, mean - Double(emptiest.value))
            let count = min(slots.count - 1, max(1, Int((wanted / max(perSlot, 1e-9)).rounded())))
            let moving = Array(slots.suffix(count))
            owned[fullest.key] = Array(slots.dropLast(count))
            owned[emptiest.key, default: []].append(contentsOf: moving)
            let carried = Int((perSlot * Double(count)).rounded())
            counts[fullest.key] = fullest.value - carried
            counts[emptiest.key] = emptiest.value + carried
            moves.append(SlotMove(
                id: SlotMoveID("rebalance-\(Int(Date().timeIntervalSince1970))-\(index)"), slots: Set(moving), source: fullest.key,
                target: emptiest.key, slotCount: map.slotCount))
        }
        return moves
    }

    static func rebalance(_ arguments: Arguments, _ context: ShardsContext) throws -> Int32 {
        let register = try context.requireRegister()
        guard let record = try register.read() else { throw ConfigurationError("cluster.register: \(register.qualifiedName) holds no record yet") }
        if !arguments.has("dry-run") { try context.requireOperator(shards: record.map.shards.map(\.id), in: record.map) }
        var reminders: [Int: Int] = [:]
        for shard in record.map.shards { reminders[shard.id] = try context.status(of: shard.id, in: record.map).reminders }
        let moves = plan(map: record.map, reminders: reminders)
        let json = arguments.has("json")
        let describe = { (move: SlotMove) -> String in
            let sorted = move.slots.sorted()
            return "\(move.id): slots \(sorted.first ?? 0)-\(sorted.last ?? 0) (\(sorted.count)) from shard \(move.source) to shard \(move.target)"
        }
        if arguments.has("dry-run") {
            if json {
                output(jsonLine(["ok": true, "result": ["reminders": reminders.map { ["shard": $0.key, "reminders": $0.value] }, "moves": moves.map(describe)]]))
            } else {
                output(moves.isEmpty ? "balanced: nothing to move" : moves.map(describe).joined(separator: "\n"))
            }
            return 0
        }
        var failed = false
        for move in moves {
            let deadline = Date().addingTimeInterval(try timeoutArgument(arguments))
            let (result, count, seconds) = try runMove(move, context: context, register: register, pauseMilliseconds: 200, deadline: deadline, json: json)
            report(move, result: result, reminders: count, seconds: seconds, json: json)
            for line in unsettledLines(move, result) { FileHandle.standardError.write(Data("chime: \(line)\n".utf8)) }
            if result.outcome == .aborted || !result.isSettled { failed = true }
        }
        if moves.isEmpty && !json { output("balanced: nothing to move") }
        return failed ? 1 : 0
    }
}
