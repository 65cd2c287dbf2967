import ChimeStore
import Foundation

/// The store's operations on the coordinator's journal, whose records are ``JournalEntry``
/// values (``JournalEntryCodec``).
extension FileStore {
    /// ``open(directory:fsync:options:lock:heldThrough:codec:)`` for a store of journal entries.
    /// - Throws: as the generic `open`.
    public static func open(
        directory: URL, fsync policy: FsyncPolicy = .always, options: Options = Options(), lock: StoreLock? = nil,
        heldThrough: UInt64? = nil
    ) throws -> (store: FileStore, recovery: Recovery<JournalEntry>) {
        try open(
            directory: directory, fsync: policy, options: options, lock: lock, heldThrough: heldThrough,
            codec: JournalEntryCodec.shared)
    }

    /// ``verify(directory:codec:)`` for a store of journal entries.
    /// - Throws: as the generic `verify`.
    public static func verify(directory: URL) throws -> StoreVerification {
        try verify(directory: directory, codec: JournalEntryCodec.shared)
    }

    /// ``repair(directory:at:codec:)`` for a store of journal entries.
    /// - Throws: as the generic `repair`.
    public static func repair(directory: URL, at now: Date = Date()) throws -> StoreRepairReport {
        try repair(directory: directory, at: now, codec: JournalEntryCodec.shared)
    }
}

extension FileJournal {
    /// ``open(directory:fsync:segmentSize:replayingAfter:clock:codec:replay:)`` for a journal
    /// of entries.
    /// - Throws: as the generic `open`.
    public static func open(
        directory: URL, fsync policy: FsyncPolicy = .always, segmentSize: Int = defaultSegmentSize,
        replayingAfter replayStart: UInt64 = 0, clock: JournalClock = .system,
        replay: (UInt64, JournalEntry) throws -> Void = { _, _ in }
    ) throws -> (journal: FileJournal, report: JournalOpenReport) {
        try open(
            directory: directory, fsync: policy, segmentSize: segmentSize, replayingAfter: replayStart, clock: clock,
            codec: JournalEntryCodec.shared, replay: replay)
    }
}

extension JournalFollower {
    /// ``readNew(using:_:)`` for a journal of entries.
    /// - Throws: as the generic `readNew`.
    @discardableResult
    public func readNew(_ body: (UInt64, JournalEntry) throws -> Void) throws -> Int {
        try readNew(using: JournalEntryCodec.shared, body)
    }
}

extension JournalLoss {
    /// ``readDamaged(_:from:to:codec:)`` for a journal of entries. Total on any bytes.
    public static func readDamaged(_ bytes: [UInt8], from start: Int, to end: Int) -> (subjects: RecordSubjects, unreadable: Int) {
        readDamaged(bytes, from: start, to: end, codec: JournalEntryCodec.shared)
    }
}
