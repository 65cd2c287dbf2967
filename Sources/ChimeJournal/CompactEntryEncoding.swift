import ChimeCore
import ChimeStore
import Foundation

/// A compact binary form for the journal's hot entries — one per firing made and one per
/// firing acknowledged — which JSON would make the most expensive part of a burst.
///
/// Record encoding byte 2. Payload: a kind byte, then the fields in order (written and read
/// with ChimeCore's ``ByteWriter`` and ``ByteReader``); strings are a u32 little-endian byte
/// count and UTF-8 bytes (invalid UTF-8 is refused), instants are f64 little-endian seconds since
/// 2001-01-01T00:00:00Z (Foundation's reference date, so they round-trip exactly), integers
/// are little-endian.
/// - kind 5, `fired`: the reminder key (`ReminderKey.storage`: `<id>\0<recipient>`; earlier
///   versions wrote the bare id, read as a legacy key), dueAt, flags (1: a next occurrence follows, 2: late, 4: a
///   missed count follows), the next occurrence's index (i64) and instant when flag 1 is set,
///   the missed count (u64) when flag 4 is set, at. Without flag 4 a late firing stands for
///   one missed occurrence. (Kind 1 held the
///   `dispatched` entries of earlier builds and is no longer read.)
/// - kind 6, `acknowledged`: the firing id as its reminder key (as in kind 5), due instant (i64 Unix
///   milliseconds) and nag number (u32), then seq (u64), worker, firedAt. (Kind 2, written by
///   earlier builds, held the firing id as its text and is still read.)
/// - kind 3, `scheduled`: at, then the rest of the payload is `Reminder.binaryEncoded()`
///   (ingest of a million reminders spent most of its time in JSON before).
/// - kind 4, `answered`: at, requestId, reply (as a string: u32 count and the bytes); kind 7,
///   the same about one recipient: at, requestId, recipient, reply.
enum CompactEntryEncoding {
    static let encoding: UInt8 = 2
    static let firedKind: UInt8 = 5
    static let acknowledgedKind: UInt8 = 6
    static let acknowledgedTextKind: UInt8 = 2
    static let scheduledKind: UInt8 = 3
    static let answeredKind: UInt8 = 4
    static let answeredForRecipientKind: UInt8 = 7

    /// The compact payload of `entry`, or `nil` for kinds that stay JSON.
    static func encode(_ entry: JournalEntry) -> [UInt8]? {
        var writer: ByteWriter
        switch entry {
        case .fired(let reminder, let dueAt, let next, let late, let missed, let at):
            writer = ByteWriter(capacity: 48 + reminder.storage.utf8.count)
            writer.writeByte(firedKind)
            writer.writeString(reminder.storage, .fixed32)
            writer.writeInstant(dueAt)
            let hasMissed = missed != (late ? 1 : 0)
            writer.writeByte((next == nil ? 0 : 1) | (late ? 2 : 0) | (hasMissed ? 4 : 0))
            if let next {
                writer.writeFixed64(UInt64(bitPattern: Int64(next.index)))
                writer.writeInstant(next.instant)
            }
            if hasMissed { writer.writeFixed64(UInt64(bitPattern: Int64(missed))) }
            writer.writeInstant(at)
        case .acknowledged(let firingId, let seq, let worker, let firedAt):
            writer = ByteWriter(capacity: 44 + firingId.key.storage.utf8.count + worker.rawValue.utf8.count)
            writer.writeByte(acknowledgedKind)
            writer.writeString(firingId.key.storage, .fixed32)
            writer.writeFixed64(UInt64(bitPattern: firingId.dueAtMilliseconds))
            writer.writeFixed32(firingId.nag)
            writer.writeFixed64(seq)
            writer.writeString(worker.rawValue, .fixed32)
            writer.writeInstant(firedAt)
        case .scheduled(let reminder, let at):
            let encoded = reminder.binaryEncoded()
            writer = ByteWriter(capacity: 9 + encoded.count)
            writer.writeByte(scheduledKind)
            writer.writeInstant(at)
            encoded.withUnsafeBytes { writer.writeBytes($0) }
        case .answered(let requestId, let reply, let at, let recipient):
            writer = ByteWriter(capacity: 21 + requestId.utf8.count + reply.count + (recipient?.rawValue.utf8.count ?? 0))
            writer.writeByte(recipient == nil ? answeredKind : answeredForRecipientKind)
            writer.writeInstant(at)
            writer.writeString(requestId, .fixed32)
            if let recipient { writer.writeString(recipient.rawValue, .fixed32) }
            writer.writeBytes(reply, .fixed32)
        default:
            return nil
        }
        return writer.bytes
    }

    /// Decodes a compact payload.
    /// - Throws: ``BinaryDecodingError``: `.unknownTag` for a kind this version does not
    ///   read, `.invalidUTF8` for a string that is not UTF-8, and the reader's other reasons.
    static func decode(_ payload: ArraySlice<UInt8>) throws(BinaryDecodingError) -> JournalEntry {
        var reader = ByteReader(payload)
        let kind = try reader.readByte()
        let entry: JournalEntry
        switch kind {
        case firedKind:
            let reminder = try readKey(&reader)
            let dueAt = try reader.readInstant()
            let flagsOffset = reader.offset
            let flags = try reader.readByte()
            guard flags & ~7 == 0 else { throw BinaryDecodingError(.unknownFlags, offset: flagsOffset) }
            var next: Occurrence?
            if flags & 1 != 0 {
                let index = Int(Int64(bitPattern: try reader.readFixed64()))
                next = Occurrence(index: index, instant: try reader.readInstant())
            }
            let late = flags & 2 != 0
            let missed = flags & 4 != 0 ? Int(clamping: try reader.readFixed64()) : (late ? 1 : 0)
            entry = .fired(reminder, dueAt: dueAt, next: next, late: late, missed: missed, at: try reader.readInstant())
        case acknowledgedKind:
            let reminder = try readKey(&reader)
            let dueAt = try reader.readFixed64()
            let nag = try reader.readFixed32()
            let firingId = FiringID(reminder, dueAtMilliseconds: Int64(bitPattern: dueAt), nag: nag)
            let seq = try reader.readFixed64()
            let worker = try reader.readString(.fixed32)
            entry = .acknowledged(firingId, seq: seq, worker: WorkerID(worker), firedAt: try reader.readInstant())
        case acknowledgedTextKind:
            let textOffset = reader.offset
            guard let firingId = FiringID(try reader.readString(.fixed32), legacy: true) else {
                throw BinaryDecodingError(.invalidValue, offset: textOffset)
            }
            let seq = try reader.readFixed64()
            let worker = try reader.readString(.fixed32)
            entry = .acknowledged(firingId, seq: seq, worker: WorkerID(worker), firedAt: try reader.readInstant())
        case scheduledKind:
            let at = try reader.readInstant()
            let reminder = try Reminder(binary: try reader.readBytes(reader.remainingCount))
            entry = .scheduled(reminder, at: at)
        case answeredKind:
            let at = try reader.readInstant()
            let requestId = try reader.readString(.fixed32)
            entry = .answered(requestId: requestId, reply: Data(try reader.readBytes(.fixed32)), at: at)
        case answeredForRecipientKind:
            let at = try reader.readInstant()
            let requestId = try reader.readString(.fixed32)
            let recipient = RecipientID(try reader.readString(.fixed32))
            entry = .answered(requestId: requestId, reply: Data(try reader.readBytes(.fixed32)), at: at, recipient: recipient)
        default:
            throw BinaryDecodingError(.unknownTag, offset: 0)
        }
        try reader.expectEnd()
        return entry
    }

    /// A reminder key (`ReminderKey.storage`; the bare reminder id of a legacy key, as earlier
    /// versions wrote it).
    private static func readKey(_ reader: inout ByteReader) throws(BinaryDecodingError) -> ReminderKey {
        let offset = reader.offset
        guard let key = ReminderKey(storage: try reader.readString(.fixed32)) else {
            throw BinaryDecodingError(.invalidValue, offset: offset)
        }
        return key
    }
}
