/// Turns the records a journal holds into payloads and back: the one place where a
/// ``FileJournal``, a ``FileStore``, a ``JournalFollower``, `verify` and `repair` learn
/// what a record means. The store frames, checksums, sequences and replays payloads; the
/// codec owns their encoding bytes (the header's payload encoding field, see
/// ``RecordFraming``; `3` is the store's gap record and never reaches a codec).
///
/// A decoder is total: any bytes give a record or a thrown error, never a trap.
public protocol JournalRecordCodec {
    /// The value one record holds.
    associatedtype Record

    /// The payload of `record` and its encoding byte.
    /// - Throws: `JournalError` `.invalidEntry` when the record cannot be encoded.
    func encode(_ record: Record) throws -> JournalRecordPayload

    /// The record a checksummed payload holds.
    /// - Parameters:
    ///   - payload: the payload bytes, as framed.
    ///   - encoding: the record header's payload encoding byte (never the gap encoding).
    /// - Throws: `JournalError` `.unknownEntryKind` for an encoding or kind this version
    ///   does not know (written by a newer version), `.undecodableEntry` for a known kind
    ///   that does not decode; its message completes "record N …" (the store adds the
    ///   record's sequence number, file and offset).
    func decode(_ payload: ArraySlice<UInt8>, encoding: UInt8) throws -> Record

    /// What `record` is about, by id, so a report of damage can name what a lost record
    /// touched (`chime store verify` and `repair`).
    func subjects(of record: Record) -> RecordSubjects

    /// The fencing epoch `record` establishes (see `StoreLock.incrementEpoch`), if any:
    /// `verify` reports the highest one beside the `EPOCH` file's.
    func epoch(of record: Record) -> UInt64?
}

extension JournalRecordCodec {
    /// No epochs.
    public func epoch(of record: Record) -> UInt64? { nil }

    /// Decodes a record read from `path`, naming its sequence number, file and offset in
    /// the error.
    /// - Throws: `JournalError` `.unknownEntryKind` or `.undecodableEntry`.
    @inlinable
    public func decode(_ record: RecordReader.Record, path: String) throws -> Record {
        do {
            return try decode(record.payload, encoding: record.encoding)
        } catch let error as JournalError {
            throw JournalError(
                error.code, path: path, offset: UInt64(record.offset), message: "record \(record.sequence) \(error.message)")
        } catch {
            throw JournalError(
                .undecodableEntry, path: path, offset: UInt64(record.offset),
                message: "record \(record.sequence) does not decode: \(error)")
        }
    }
}

/// One record's payload as a codec encoded it.
public struct JournalRecordPayload: Sendable {
    /// The payload encoding byte of the record header (not `RecordFraming.gapEncoding`).
    public var encoding: UInt8
    /// The payload, at most `RecordFraming.maximumPayloadLength` bytes.
    public var bytes: [UInt8]

    /// Creates a payload from its encoding byte and bytes.
    @inlinable
    public init(encoding: UInt8, bytes: [UInt8]) {
        self.encoding = encoding
        self.bytes = bytes
    }
}
