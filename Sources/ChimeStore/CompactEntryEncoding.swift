import ChimeCore
import Foundation

/// A compact binary form for the journal's hot entries — one per firing made and one per
/// firing acknowledged — which JSON would make the most expensive part of a burst.
///
/// Record encoding byte 2. Payload: a kind byte, then the fields in order; strings are a u32
/// little-endian byte count and UTF-8 bytes, instants are f64 little-endian seconds since
/// 2001-01-01T00:00:00Z (Foundation's reference date, so they round-trip exactly), integers
/// are little-endian.
/// - kind 5, `fired`: reminderId, dueAt, flags (1: a next occurrence follows, 2: late, 4: a
///   missed count follows), the next occurrence's index (i64) and instant when flag 1 is set,
///   the missed count (u64) when flag 4 is set, at. Without flag 4 a late firing stands for
///   one missed occurrence. (Kind 1 held the
///   `dispatched` entries of earlier builds and is no longer read.)
/// - kind 6, `acknowledged`: the firing id as its reminderId, due instant (i64 Unix
///   milliseconds) and nag number (u32), then seq (u64), worker, firedAt. (Kind 2, written by
///   earlier builds, held the firing id as its text and is still read.)
/// - kind 3, `scheduled`: at, then the rest of the payload is `Reminder.binaryEncoded()`
///   (ingest of a million reminders spent most of its time in JSON before).
/// - kind 4, `answered`: at, requestId, reply (as a string: u32 count and the bytes).
enum CompactEntryEncoding {
    static let encoding: UInt8 = 2
    static let firedKind: UInt8 = 5
    static let acknowledgedKind: UInt8 = 6
    static let acknowledgedTextKind: UInt8 = 2
    static let scheduledKind: UInt8 = 3
    static let answeredKind: UInt8 = 4

    /// The compact payload of `entry`, or `nil` for kinds that stay JSON.
    static func encode(_ entry: JournalEntry) -> [UInt8]? {
        var bytes: [UInt8] = []
        switch entry {
        case .fired(let reminder, let dueAt, let next, let late, let missed, let at):
            bytes.reserveCapacity(48 + reminder.rawValue.utf8.count)
            bytes.append(firedKind)
            append(reminder.rawValue, to: &bytes)
            append(dueAt.timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
            let hasMissed = missed != (late ? 1 : 0)
            bytes.append((next == nil ? 0 : 1) | (late ? 2 : 0) | (hasMissed ? 4 : 0))
            if let next {
                append(UInt64(bitPattern: Int64(next.index)), to: &bytes)
                append(next.instant.timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
            }
            if hasMissed { append(UInt64(bitPattern: Int64(missed)), to: &bytes) }
            append(at.timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
        case .acknowledged(let firingId, let seq, let worker, let firedAt):
            bytes.reserveCapacity(44 + firingId.reminder.rawValue.utf8.count + worker.rawValue.utf8.count)
            bytes.append(acknowledgedKind)
            append(firingId.reminder.rawValue, to: &bytes)
            append(UInt64(bitPattern: firingId.dueAtMilliseconds), to: &bytes)
            withUnsafeBytes(of: firingId.nag.littleEndian) { bytes.append(contentsOf: $0) }
            append(seq, to: &bytes)
            append(worker.rawValue, to: &bytes)
            append(firedAt.timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
        case .scheduled(let reminder, let at):
            let encoded = reminder.binaryEncoded()
            bytes.reserveCapacity(9 + encoded.count)
            bytes.append(scheduledKind)
            append(at.timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
            bytes.append(contentsOf: encoded)
        case .answered(let requestId, let reply, let at):
            bytes.reserveCapacity(17 + requestId.utf8.count + reply.count)
            bytes.append(answeredKind)
            append(at.timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
            append(requestId, to: &bytes)
            withUnsafeBytes(of: UInt32(reply.count).littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: reply)
        default:
            return nil
        }
        return bytes
    }

    /// Decodes a compact payload; `nil` when it is malformed or of an unknown kind.
    static func decode(_ payload: ArraySlice<UInt8>) -> JournalEntry? {
        var reader = Reader(bytes: payload)
        switch reader.byte() {
        case firedKind:
            guard let reminder = reader.string(), let dueAt = reader.u64(), let flags = reader.byte(), flags & ~7 == 0
            else { return nil }
            var next: Occurrence?
            if flags & 1 != 0 {
                guard let index = reader.u64(), let instant = reader.u64() else { return nil }
                next = Occurrence(index: Int(Int64(bitPattern: index)), instant: date(instant))
            }
            let late = flags & 2 != 0
            var missed = late ? 1 : 0
            if flags & 4 != 0 {
                guard let count = reader.u64() else { return nil }
                missed = Int(clamping: count)
            }
            guard let at = reader.u64(), reader.isAtEnd else { return nil }
            return .fired(ReminderID(reminder), dueAt: date(dueAt), next: next, late: late, missed: missed, at: date(at))
        case acknowledgedKind:
            guard let reminder = reader.string(), let dueAt = reader.u64(), let nag = reader.u32(),
                let seq = reader.u64(), let worker = reader.string(), let firedAt = reader.u64(), reader.isAtEnd
            else { return nil }
            let firingId = FiringID(
                reminder: ReminderID(reminder), dueAtMilliseconds: Int64(bitPattern: dueAt), nag: nag)
            return .acknowledged(firingId, seq: seq, worker: WorkerID(worker), firedAt: date(firedAt))
        case acknowledgedTextKind:
            guard let text = reader.string(), let firingId = FiringID(text), let seq = reader.u64(),
                let worker = reader.string(), let firedAt = reader.u64(), reader.isAtEnd
            else { return nil }
            return .acknowledged(firingId, seq: seq, worker: WorkerID(worker), firedAt: date(firedAt))
        case scheduledKind:
            guard let at = reader.u64(), let reminder = try? Reminder(binary: payload[reader.index...]) else { return nil }
            return .scheduled(reminder, at: date(at))
        case answeredKind:
            guard let at = reader.u64(), let requestId = reader.string(), let reply = reader.counted(), reader.isAtEnd
            else { return nil }
            return .answered(requestId: requestId, reply: Data(reply), at: date(at))
        default:
            return nil
        }
    }

    private static func date(_ bits: UInt64) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func append(_ text: String, to bytes: inout [UInt8]) {
        let utf8 = text.utf8
        withUnsafeBytes(of: UInt32(utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: utf8)
    }

    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var index: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            self.index = bytes.startIndex
        }

        var isAtEnd: Bool { index == bytes.endIndex }

        mutating func byte() -> UInt8? {
            guard index < bytes.endIndex else { return nil }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func u64() -> UInt64? {
            guard bytes.endIndex - index >= 8 else { return nil }
            var value: UInt64 = 0
            for offset in 0..<8 { value |= UInt64(bytes[index + offset]) << (8 * UInt64(offset)) }
            index += 8
            return value
        }

        mutating func u32() -> UInt32? {
            guard bytes.endIndex - index >= 4 else { return nil }
            var value: UInt32 = 0
            for offset in 0..<4 { value |= UInt32(bytes[index + offset]) << (8 * UInt32(offset)) }
            index += 4
            return value
        }

        mutating func string() -> String? {
            counted().map { String(decoding: $0, as: UTF8.self) }
        }

        /// A u32 little-endian count and that many bytes.
        mutating func counted() -> ArraySlice<UInt8>? {
            guard bytes.endIndex - index >= 4 else { return nil }
            var count = 0
            for offset in 0..<4 { count |= Int(bytes[index + offset]) << (8 * offset) }
            guard bytes.endIndex - index - 4 >= count else { return nil }
            index += 4
            defer { index += count }
            return bytes[index..<index + count]
        }
    }
}
