import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

@testable import ChimeCoordinator

/// One record of a model shard's journal: a coordinator entry or a slot-move step (journaled
/// as `JournalEntry.slotMove`; `.move(e)` is shorthand for `.entry(.slotMove(e))`).
enum ShardRecord: Equatable {
    case entry(JournalEntry)
    case move(SlotMoveEntry)

    var journalEntry: JournalEntry {
        switch self {
        case .entry(let entry): entry
        case .move(let step): .slotMove(step)
        }
    }
}

/// A shard of the slot-move model: a journal (what survives a crash) and what a coordinator
/// holds in memory — the real `DurableState` (with its `SlotMoveLedger`), the fold of the
/// journal by `DurableState.apply`, and the volatile parts of the protocol (pauses, staging, receipts, its last read
/// of the map register).
struct SlotMoveModelShard {
    let id: Int
    let settings: DurableSettings
    private(set) var journal: [ShardRecord] = []
    var isUp = true
    private(set) var durable: DurableState
    var ledger: SlotMoveLedger { durable.moves }
    var mapView: SlotMapRecord
    var pausedUntil: [SlotMoveID: Date] = [:]
    var staging: [SlotMoveID: SlotMoveStaging] = [:]
    var receipts: [SlotMoveID: SlotMoveReceipt] = [:]

    init(id: Int, settings: DurableSettings, mapView: SlotMapRecord) {
        self.id = id
        self.settings = settings
        self.mapView = mapView
        durable = DurableState(settings: settings)
    }

    /// The sequence of the last record (1 is the first).
    var journalEnd: UInt64 { UInt64(journal.count) }

    /// Journals a record and folds it: the live path, which a recovery repeats.
    mutating func record(_ record: ShardRecord) {
        journal.append(record)
        durable.apply(record.journalEntry)
    }

    /// The journal entries after `seq`, with their sequence numbers.
    func entries(after seq: UInt64) -> [SequencedEntry] {
        guard seq < journalEnd else { return [] }
        return journal.indices.dropFirst(Int(seq)).map { SequencedEntry(seq: UInt64($0 + 1), entry: journal[$0].journalEntry) }
    }

    /// The sequence of the last coordinator entry about `move`'s slots (0: none).
    func lastEntry(about move: SlotMove) -> UInt64 {
        for index in journal.indices.reversed() {
            if case .entry(let entry) = journal[index], move.isAbout(entry) { return UInt64(index + 1) }
        }
        return 0
    }

    /// The state (with its ledger) a recovery rebuilds from the journal alone.
    func recovered() -> DurableState {
        var durable = DurableState(settings: settings)
        for record in journal { durable.apply(record.journalEntry) }
        return durable
    }

    /// A kill -9: everything in memory is gone; the journal stays.
    mutating func crash() {
        isUp = false
        pausedUntil = [:]
        staging = [:]
        receipts = [:]
    }

    /// A restart: the state is the journal's fold; the map is read again.
    mutating func restart(reading record: SlotMapRecord) {
        durable = recovered()
        mapView = record
        isUp = true
    }

    /// The firings this shard may hand a worker now, in id order.
    var dispatchable: [FiringID] {
        durable.deliveries.unsettled.keys.filter { ledger.mayDispatch($0) }.sorted()
    }

    /// The armed reminders due at `now` that this shard fires, earliest first.
    func due(at now: Date) -> [(key: ReminderKey, deadline: Date)] {
        durable.schedule.timer.deadlines
            .filter { $0.value <= now && ledger.mayFire(for: $0.key.recipient) }
            .map { (key: $0.key, deadline: $0.value) }
            .sorted { ($0.deadline, $0.key) < ($1.deadline, $1.key) }
    }
}
