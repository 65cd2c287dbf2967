import ChimeCore
import ChimeWire
import Foundation

extension CoordinatorSnapshot {
    /// The first byte of a payload.
    static let binaryPayloadMarker: UInt8 = 2

    /// The snapshot as a payload.
    ///
    /// Layout: the byte 2; a u32 little-endian byte count and that many bytes of this
    /// snapshot's JSON (every field but `reminders` and `answered`); then the reminders: a varint count, and per
    /// reminder its id (varint length + UTF-8), its `Reminder.binaryEncoded()` bytes (varint
    /// length + bytes, copied as they are held in memory), a flags byte (1: next occurrence,
    /// 2: armed instant, 4: last fired), the next occurrence's index (zigzag
    /// varint) and instant, the armed instant, the state (its index in
    /// `ReminderState.allCases`), the delivered count (varint) and the last fired instant;
    /// then the remembered answers (`answered`, also left out of the JSON): a varint count,
    /// and per answer its request id (varint length + UTF-8) and reply (varint length + bytes).
    /// Instants are f64 little-endian seconds since 2001-01-01T00:00:00Z (exact). Varints
    /// are LEB128, as in `Reminder.binaryEncoded()`.
    public func encodedPayload() -> Data {
        let json = payloadJSON()
        var counter = ByteCounter()
        encodePayload(json: json, into: &counter)
        var writer = ByteWriter(capacity: counter.count)
        encodePayload(json: json, into: &writer)
        return Data(writer.bytes)
    }

    /// The JSON part of the payload (every field but `reminders` and `answered`).
    public func payloadJSON() -> Data { WireCodec().encode(self) }

    /// Writes the payload (see the type's documentation) to `sink`, `json` being
    /// ``payloadJSON()``: into a `ByteCounter` for its length, then into the store's
    /// streaming sink, so a snapshot is never held whole in memory.
    public func encodePayload<Sink: BinarySink>(json: Data, into writer: inout Sink) {
        writer.writeByte(Self.binaryPayloadMarker)
        withUnsafeBytes(of: UInt32(json.count).littleEndian) { writer.writeBytes($0) }
        json.withUnsafeBytes { writer.writeBytes($0) }
        writer.writeCount(reminders.count)
        for record in reminders {
            writer.writeString(record.id.rawValue)
            writer.writeCount(record.reminderBytes.count)
            record.reminderBytes.withUnsafeBytes { writer.writeBytes($0) }
            var flags: UInt8 = 0
            if record.nextIndex != nil && record.nextFireAt != nil { flags |= 1 }
            if record.armedAt != nil { flags |= 2 }
            if record.lastFiredAt != nil { flags |= 4 }
            writer.writeByte(flags)
            if let index = record.nextIndex, let instant = record.nextFireAt {
                writer.writeInt(index)
                writer.writeInstant(instant)
            }
            if let armedAt = record.armedAt { writer.writeInstant(armedAt) }
            writer.writeByte(UInt8(ReminderState.allCases.firstIndex(of: record.state) ?? 0))
            writer.writeCount(record.deliveredCount)
            if let lastFiredAt = record.lastFiredAt { writer.writeInstant(lastFiredAt) }
        }
        writer.writeCount(answered.count)
        for answer in answered {
            writer.writeString(answer.requestId)
            writer.writeCount(answer.reply.count)
            answer.reply.withUnsafeBytes { writer.writeBytes($0) }
        }
    }

    /// Reads a payload (see the type's documentation).
    /// - Throws: `WireError(.invalidArgument)` for a payload that does not decode.
    public static func decode(payload: Data) throws(WireError) -> CoordinatorSnapshot {
        guard payload.first == binaryPayloadMarker else {
            throw WireError(.invalidArgument, "the snapshot does not start with the payload marker \(binaryPayloadMarker)")
        }
        let bytes = [UInt8](payload)
        guard bytes.count >= 5 else { throw WireError(.invalidArgument, "the snapshot is truncated") }
        let jsonLength = Int(bytes[1]) | Int(bytes[2]) << 8 | Int(bytes[3]) << 16 | Int(bytes[4]) << 24
        guard jsonLength <= bytes.count - 5 else { throw WireError(.invalidArgument, "the snapshot is truncated") }
        var snapshot: CoordinatorSnapshot
        do {
            snapshot = try WireCodec().decode(CoordinatorSnapshot.self, from: Data(bytes[5..<5 + jsonLength]))
        } catch {
            throw WireError(.invalidArgument, "the snapshot does not decode: \(error.message)")
        }
        do {
            var reader = ByteReader(bytes[(5 + jsonLength)...])
            let count = try reader.readCount()
            var records: [ReminderRecord] = []
            records.reserveCapacity(min(count, bytes.count / 8))
            for _ in 0..<count {
                let id = ReminderID(try reader.readString())
                let reminderBytes = Array(try reader.readBytes(try reader.readCount()))
                let flags = try reader.readByte()
                var nextIndex: Int?
                var nextFireAt: Date?
                if flags & 1 != 0 {
                    nextIndex = try reader.readInt()
                    nextFireAt = try reader.readInstant()
                }
                let armedAt = flags & 2 != 0 ? try reader.readInstant() : nil
                let stateIndex = Int(try reader.readByte())
                guard stateIndex < ReminderState.allCases.count else {
                    throw WireError(.invalidArgument, "the snapshot names reminder state \(stateIndex) for \(id)")
                }
                // A number, not a length: it may exceed the bytes that remain.
                guard let deliveredCount = Int(exactly: try reader.readVarint()) else {
                    throw WireError(.invalidArgument, "the snapshot's delivered count of \(id) is out of range")
                }
                let lastFiredAt = flags & 4 != 0 ? try reader.readInstant() : nil
                records.append(ReminderRecord(
                    reminderBytes: reminderBytes, id: id, nextIndex: nextIndex, nextFireAt: nextFireAt,
                    armedAt: armedAt,
                    state: ReminderState.allCases[stateIndex], deliveredCount: deliveredCount,
                    lastFiredAt: lastFiredAt))
            }
            var answered: [AnsweredRequest] = []
            for _ in 0..<(try reader.readCount()) {
                let requestId = try reader.readString()
                answered.append(AnsweredRequest(requestId: requestId, reply: Data(try reader.readBytes(try reader.readCount()))))
            }
            snapshot.answered = answered
            guard reader.remainingCount == 0 else {
                throw WireError(.invalidArgument, "the snapshot has \(reader.remainingCount) bytes after its answers")
            }
            snapshot.reminders = records
        } catch let error as BinaryDecodingError {
            throw WireError(.invalidArgument, "the snapshot's reminders do not decode: \(error)")
        } catch let error as WireError {
            throw error
        } catch {
            throw WireError(.invalidArgument, "the snapshot's reminders do not decode: \(error)")
        }
        return snapshot
    }
}
