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
        let pause = try arguments.value("pause-ms").map { text -> Int in
            guard let value = Int(text), (1...60_000).contains(value) else { throw UsageError("--pause-ms must be 1…60000") }
            return value
        } ?? 200
        let timeout = try arguments.value("timeout").map { text -> Double in
            guard let value = Double(text), value > 0 else { throw UsageError("--timeout must be a number of seconds > 0") }
            return value
        } ?? 600
        let batch = try arguments.value("batch-slots").map { text -> Int in
            guard let value = Int(text), value >= 1 else { throw UsageError("--batch-slots must be 1 or more") }
            return value
        } ?? 64
        let json = arguments.has("json")
        // One move per batch of slots (in slot order), so each slice fits in a request; a
        // rerun with the same SLOTS makes the same batches.
        let sorted = slots.sorted()
        let batches = stride(from: 0, to: sorted.count, by: batch).map { Set(sorted[$0..<min(sorted.count, $0 + batch)]) }
        let started = Date()
        var total = (moves: 0, slots: 0, reminders: 0, alreadyThere: 0)
        var outcome = SlotMoveOutcome.committed(mapEpoch: record.map.mapEpoch)
        for (index, slots) in batches.enumerated() {
            guard let record = try register.read() else { throw ConfigurationError("cluster.register: \(register.qualifiedName) lost its record") }
            let fixedID = arguments.value("id").map { SlotMoveID(batches.count == 1 ? $0 : "\($0)-\(index)") }
            guard let move = try resolveMove(slots, target: target, id: fixedID, record: record, context: context) else {
                total.alreadyThere += slots.count
                continue
            }
            let (result, reminders, _) = try runMove(move, context: context, register: register, pauseMilliseconds: pause, timeout: timeout, json: json)
            outcome = result
            total.moves += 1
            total.slots += move.slots.count
            total.reminders += reminders ?? 0
            if !json { report(move, outcome: result, reminders: reminders, seconds: 0, json: false, brief: true) }
            if result == .aborted { break }
        }
        let seconds = Date().timeIntervalSince(started)
        let committed = outcome != .aborted
        let perSecond = { (count: Int) in seconds > 0 ? Double(count) / seconds : 0 }
        if json {
            output(jsonLine(["ok": true, "result": [
                "target": target, "slots": slots.count, "moves": total.moves, "moved": total.slots, "alreadyThere": total.alreadyThere,
                "outcome": committed ? "committed" : "aborted", "reminders": total.reminders, "seconds": seconds,
                "slotsPerSecond": perSecond(total.slots), "remindersPerSecond": perSecond(total.reminders),
            ]]))
        } else {
            output(String(
                format: "%d slots to shard %d: %@ in %d moves (%d there already), %.2f s (%.1f slots/s, %.0f reminders/s)", slots.count, target,
                committed ? "moved" : "aborted", total.moves, total.alreadyThere, seconds, perSecond(total.slots), perSecond(total.reminders)))
        }
        return committed ? 0 : 1
    }

    /// The move that carries `slots` to `target`: the open move of exactly these slots (a
    /// rerun resumes it), a decided one the target has not finished (a killed mover
    /// committed it), else a new one from their one source; `nil` when `target` owns them.
    /// - Throws: `UsageError` when the slots have several owners.
    static func resolveMove(
        _ slots: Set<Int>, target: Int, id: SlotMoveID?, record: SlotMapRecord, context: ShardsContext
    ) throws -> SlotMove? {
        if let open = record.open.values.first(where: { $0.slots == slots && $0.target == target }) { return open }
        if let unsettled = try? context.status(of: target, in: record.map).ledger.incoming
            .first(where: { $0.move.slots == slots && record.outcomes[$0.move.id] != nil })?.move
        {
            return unsettled
        }
        let sources = Set(slots.compactMap { record.map.ownerID(ofSlot: $0) })
        guard sources.count == 1, let source = sources.first else {
            throw UsageError("the slots are owned by shards \(sources.sorted()): move one source's slots at a time")
        }
        guard source != target else { return nil }
        let fresh = id ?? SlotMoveID("move-\(Int(Date().timeIntervalSince1970 * 1000))-\(getpid())-\(slots.min() ?? 0)")
        return SlotMove(id: fresh, slots: slots, source: source, target: target, slotCount: record.map.slotCount)
    }

    /// Drives one move, with a progress line on stderr unless `json`.
    static func runMove(
        _ move: SlotMove, context: ShardsContext, register: any SlotMapRegistering, pauseMilliseconds: Int, timeout: Double, json: Bool
    ) throws -> (SlotMoveOutcome, Int?, Double) {
        var driver = context.driver(register)
        driver.pause = Double(pauseMilliseconds) / 1000
        let started = Date()
        var reminders: Int?
        let outcome = try driver.run(move, deadline: started.addingTimeInterval(timeout), progress: { progress in
            reminders = progress.reminders ?? reminders
            guard !json else { return }
            let elapsed = max(0.001, Date().timeIntervalSince(started))
            let line = String(
                format: "\r%@: %@, %d slots, %@ reminders, %.1f s (%.1f slots/s, %.0f reminders/s)   ", move.id.rawValue,
                "\(progress.step)".prefix(40).description, move.slots.count, reminders.map(String.init) ?? "?", elapsed,
                Double(move.slots.count) / elapsed, Double(reminders ?? 0) / elapsed)
            FileHandle.standardError.write(Data(line.utf8))
        })
        if !json { FileHandle.standardError.write(Data("\n".utf8)) }
        return (outcome, reminders, Date().timeIntervalSince(started))
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
            let (outcome, count, seconds) = try runMove(move, context: context, register: register, pauseMilliseconds: 200, timeout: 600, json: json)
            report(move, outcome: outcome, reminders: count, seconds: seconds, json: json)
            if outcome == .aborted { failed = true }
        }
        if moves.isEmpty && !json { output("balanced: nothing to move") }
        return failed ? 1 : 0
    }
}
