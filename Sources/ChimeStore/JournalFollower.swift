import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a journal that another process is appending to, without the lock and without
/// changing a byte: a warm standby's view of the active coordinator's journal.
///
/// Each `readNew` call reads the bytes appended since the last call (from the byte after the
/// last complete group), hands every record after `lastSequence` of every complete group,
/// checksummed and decoded, to the caller, and follows the journal into the next segment when
/// it rolls. A record that is incomplete or fails its checksum is where the writer is still
/// writing: the follower stops there and reads it again next time. It **holds a group's
/// records until its last one has arrived** (``RecordFraming``): the records of an incomplete
/// group are neither decoded nor handed out, and the next call reads them again from the
/// group's first, so a caller applying what it is handed never holds half of an append (a
/// request). A group's records are all decoded before the first is handed out. It never
/// decides what is torn or corrupt; the coordinator that takes over opens the journal with
/// `FileStore.open`, which does (and drops an incomplete final group).
///
/// One thread uses a follower at a time.
public final class JournalFollower {
    /// The `journal/` directory followed.
    public let directory: URL
    /// The sequence number of the last record handed out (or the snapshot's, at first).
    public private(set) var lastSequence: UInt64
    /// The segment being read, where its next group starts (in bytes) and the record version
    /// of its format (known once its header was read).
    private var position: Position?

    private struct Position {
        var path: String
        var firstSequence: UInt64
        var offset: Int
        var recordVersion: UInt8 = RecordFraming.recordFormatVersion
    }

    /// Makes a follower that hands out the records after `sequence`.
    /// - Parameters:
    ///   - directory: the store's `journal/` directory.
    ///   - sequence: the last sequence number already applied (a snapshot's; 0: none).
    public init(directory: URL, after sequence: UInt64) {
        self.directory = directory
        self.lastSequence = sequence
    }

    /// Reads every complete group appended since the last call and hands each of its records
    /// after `lastSequence`, decoded with `codec`, to `body`, in order.
    /// - Returns: how many entries were handed out.
    /// - Throws: `JournalError` `.corrupt` when the journal no longer holds the record after
    ///   `lastSequence` (its segment was deleted behind a newer snapshot, or a segment is
    ///   missing) or a damaged record or an incomplete group is followed by a newer segment;
    ///   `.unknownEntryKind` / `.undecodableEntry` (nothing of that record's group was handed
    ///   out); `.io`; and what `body` throws. After an error, load the newest snapshot and
    ///   start a new follower.
    @discardableResult
    public func readNew<Codec: JournalRecordCodec>(
        using codec: Codec, _ body: (UInt64, Codec.Record) throws -> Void
    ) throws -> Int {
        var handedOut = 0
        // The writer may finish a segment and roll between this read and the listing below:
        // a segment that looked damaged is read once more before that is called corruption.
        var hasReread = false
        while true {
            if position == nil {
                guard let located = try locate() else { return handedOut }
                position = located
            }
            guard var current = position else { return handedOut }
            guard let bytes = try Self.readTail(of: current.path, from: current.offset) else {
                throw JournalError(.corrupt, path: current.path, message: "the segment being followed was deleted")
            }
            var start = 0
            if current.offset == 0 {
                // A segment just created may not have its header yet: read it again later.
                guard case .valid(let first, let format) = RecordFraming.checkSegmentHeader(bytes) else { return handedOut }
                guard first == current.firstSequence else {
                    throw JournalError(.corrupt, path: current.path, message: "segment header names sequence \(first)")
                }
                start = RecordFraming.segmentHeaderLength
                current.recordVersion = RecordFraming.recordVersion(ofSegmentFormat: format)
            }
            var reader = RecordReader(bytes: bytes, startingAt: start, expectedSequence: nil, recordVersion: current.recordVersion)
            // The reader hands out complete groups only; each is decoded whole before any of
            // it reaches `body`.
            var group: [(UInt64, Codec.Record)] = []
            while let record = reader.next() {
                if record.sequence > lastSequence {
                    let previous = group.last?.0 ?? lastSequence
                    guard record.sequence == previous + 1 || previous == 0 else {
                        throw JournalError(
                            .corrupt, path: current.path,
                            message: "record \(record.sequence) follows \(previous): the follower missed records")
                    }
                    group.append((record.sequence, try codec.decode(record, path: current.path)))
                }
                guard !record.continuesGroup else { continue }
                for (sequence, entry) in group {
                    try body(sequence, entry)
                    lastSequence = sequence
                    handedOut += 1
                }
                group.removeAll(keepingCapacity: true)
            }
            current.offset += reader.offset
            position = current
            // Gap records of a repair advance the sequence without a record to hand out.
            if let expected = reader.expectedSequence, expected > lastSequence + 1 { lastSequence = expected - 1 }
            // The writer rolls only after the segment is complete, so a later segment that
            // starts where this one ends means: go on there.
            let next = try FileJournal.segmentFiles(in: directory).first { $0.firstSequence > current.firstSequence }
            guard let next else { return handedOut }
            guard next.firstSequence == lastSequence + 1 else {
                if reader.damage != nil {
                    if !hasReread {
                        hasReread = true
                        continue
                    }
                    throw JournalError(
                        .corrupt, path: current.path,
                        message: "damage at offset \(current.offset) before the next segment \(next.path): \(reader.damage.map { "\($0.reason)" } ?? "")")
                }
                return handedOut
            }
            position = Position(path: next.path, firstSequence: next.firstSequence, offset: 0)
            hasReread = false
        }
    }

    /// The segment that holds the record after `lastSequence`: the newest one starting at
    /// or before it; `nil` when the journal has no segment yet.
    private func locate() throws -> Position? {
        let files = try FileJournal.segmentFiles(in: directory)
        guard let first = files.first else { return nil }
        guard first.firstSequence <= lastSequence + 1 else {
            throw JournalError(
                .corrupt, path: first.path,
                message: "the journal starts at \(first.firstSequence), after \(lastSequence + 1): load the newer snapshot")
        }
        let holder = files.last { $0.firstSequence <= lastSequence + 1 } ?? first
        return Position(path: holder.path, firstSequence: holder.firstSequence, offset: 0)
    }

    /// The bytes of the file at `path` from `offset` to its current end; `nil` when the file
    /// does not exist.
    static func readTail(of path: String, from offset: Int) throws -> [UInt8]? {
        let descriptor: Int32
        do {
            descriptor = try FileCalls.openFile(path, O_RDONLY)
        } catch let error as JournalError {
            if try FileCalls.fileSize(atPath: path) == nil { return nil }
            throw error
        }
        defer { FileCalls.closeFile(descriptor) }
        let size = try FileCalls.fileSize(descriptor, path: path)
        guard size > offset else { return [] }
        var bytesRead = 0
        return try [UInt8](unsafeUninitializedCapacity: size - offset) { buffer, initialized in
            bytesRead = try FileCalls.readAll(descriptor, into: UnsafeMutableRawBufferPointer(buffer), at: offset, path: path)
            initialized = bytesRead
        }
    }
}
