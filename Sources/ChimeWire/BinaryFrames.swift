import ChimeCore
import Foundation

/// The frames' own items, on the one reader and writer of ChimeCore: strings and byte
/// runs carry a u32 little-endian length (`.fixed32`), an absent string is the length
/// u32 max, and an instant is f64 seconds since Foundation's reference date that must lie
/// in `RFC3339.supportedInstants` (NaN refused).
extension BinarySink {
    mutating func writeOptionalFrameString(_ value: String?) {
        guard let value else { return writeFixed32(.max) }
        writeString(value, .fixed32)
    }
}

extension ByteReader {
    /// `nil` for the absent marker (length u32 max), else the string.
    mutating func readOptionalFrameString() throws(BinaryDecodingError) -> String? {
        let start = offset
        let count = try readFixed32()
        if count == .max { return nil }
        guard count <= remainingCount else { throw BinaryDecodingError(.lengthPastEnd, offset: start) }
        return try readUTF8(count: Int(count))
    }

    /// An instant, refused outside `RFC3339.supportedInstants`.
    mutating func readSupportedInstant() throws(BinaryDecodingError) -> Date {
        let start = offset
        let date = try readInstant()
        guard RFC3339.isSupported(date) else { throw BinaryDecodingError(.instantOutOfRange, offset: start) }
        return date
    }
}

extension Firing {
    /// Binary form: the firing id (`FiringID.write`), recipient, dueAt, attempt u32, flags u8
    /// (1 late, 2 seq, 4 eventAt, 8 a reminderId other than the firing id's follows, 16
    /// missed, 32 attention content follows, 64 extended content follows), seq u64?, eventAt?,
    /// reminderId?, missed u32?, then the content (`Content.write`), then with flag 32 the
    /// attention content (`Content.writeAttention`), then with flag 64 the extended content
    /// (`Content.writeExtended`).
    func write(to writer: inout ByteWriter, contentCoder: JSONEncoder) {
        firingId.write(to: &writer)
        writer.writeString(recipient.rawValue, .fixed32)
        writer.writeInstant(dueAt)
        writer.writeFixed32(UInt32(clamping: attempt))
        let ownReminder = !firingId.key.hasID(reminderId)
        writer.writeByte(
            (late ? 1 : 0) | (seq != nil ? 2 : 0) | (eventAt != nil ? 4 : 0) | (ownReminder ? 8 : 0)
                | (missed != nil ? 16 : 0) | (content.hasAttentionFields ? 32 : 0) | (content.hasExtendedFields ? 64 : 0))
        if let seq { writer.writeFixed64(seq) }
        if let eventAt { writer.writeInstant(eventAt) }
        if ownReminder { writer.writeString(reminderId.rawValue, .fixed32) }
        if let missed { writer.writeFixed32(UInt32(clamping: missed)) }
        content.write(to: &writer, userInfoCoder: contentCoder)
        if content.hasAttentionFields { content.writeAttention(to: &writer) }
        if content.hasExtendedFields { content.writeExtended(to: &writer) }
    }

    static func read(from reader: inout ByteReader, contentDecoder: JSONDecoder) throws(BinaryDecodingError) -> Firing {
        let firingId = try FiringID.read(from: &reader)
        let recipient = try reader.readString(.fixed32)
        let dueAt = try reader.readSupportedInstant()
        let attempt = try reader.readFixed32()
        let flagsOffset = reader.offset
        let flags = try reader.readByte()
        guard flags & ~127 == 0 else { throw BinaryDecodingError(.unknownFlags, offset: flagsOffset) }
        let seq = flags & 2 != 0 ? try reader.readFixed64() : nil
        let eventAt = flags & 4 != 0 ? try reader.readSupportedInstant() : nil
        let reminderId = flags & 8 != 0 ? ReminderID(try reader.readString(.fixed32)) : firingId.reminder
        let missed = flags & 16 != 0 ? Int(try reader.readFixed32()) : nil
        var content = try Content.read(from: &reader, userInfoDecoder: contentDecoder)
        if flags & 32 != 0 { try content.readAttention(from: &reader) }
        if flags & 64 != 0 { try content.readExtended(from: &reader) }
        var firing = Firing(
            reminderId: reminderId, recipient: RecipientID(recipient), dueAt: dueAt, content: content,
            attempt: Int(attempt), late: flags & 1 != 0, missed: missed, eventAt: eventAt)
        // An earlier version's frame names the reminder by its id alone: the firing's recipient.
        firing.firingId = firingId.isLegacy ? firingId.resolved(to: firing.recipient) : firingId
        firing.seq = seq
        return firing
    }
}

extension FiringID {
    /// Binary form: the reminder key's storage (`<id>\0<recipient>`, a string), due instant
    /// (i64 Unix milliseconds), nag u32.
    func write(to writer: inout ByteWriter) {
        writer.writeString(key.storage, .fixed32)
        writer.writeFixed64(UInt64(bitPattern: dueAtMilliseconds))
        writer.writeFixed32(nag)
    }

    static func read(from reader: inout ByteReader) throws(BinaryDecodingError) -> FiringID {
        let keyOffset = reader.offset
        guard let key = ReminderKey(storage: try reader.readString(.fixed32)) else {
            throw BinaryDecodingError(.invalidValue, offset: keyOffset)
        }
        let dueAt = try reader.readFixed64()
        let nag = try reader.readFixed32()
        return FiringID(key, dueAtMilliseconds: Int64(bitPattern: dueAt), nag: nag)
    }
}

extension Content {
    /// Binary form: seven optional strings (title, body, action, launchImage, sound, category,
    /// threadId), badge (u8 0 none / 1 set + i64 / 2 increment), userInfo as JSON bytes
    /// (u32 max when absent).
    func write(to writer: inout ByteWriter, userInfoCoder: JSONEncoder) {
        for field in [title, body, action, launchImage, sound, category, threadId] {
            writer.writeOptionalFrameString(field)
        }
        switch badgeChange {
        case nil: writer.writeByte(0)
        case .set(let number)?:
            writer.writeByte(1)
            writer.writeFixed64(UInt64(bitPattern: Int64(number)))
        case .increment?: writer.writeByte(2)
        }
        if let userInfo, let json = try? userInfoCoder.encode(userInfo) {
            writer.writeBytes(json, .fixed32)
        } else {
            writer.writeFixed32(.max)
        }
    }

    static func read(from reader: inout ByteReader, userInfoDecoder: JSONDecoder) throws(BinaryDecodingError) -> Content {
        var strings: [String?] = []
        for _ in 0..<7 { strings.append(try reader.readOptionalFrameString()) }
        let badgeOffset = reader.offset
        let badge: BadgeChange? =
            switch try reader.readByte() {
            case 0: nil
            case 1: .set(Int(Int64(bitPattern: try reader.readFixed64())))
            case 2: .increment
            default: throw BinaryDecodingError(.unknownTag, offset: badgeOffset)
            }
        var userInfo: [String: PropertyListValue]?
        let userInfoOffset = reader.offset
        if let json = try reader.readOptionalFrameString() {
            do {
                userInfo = try userInfoDecoder.decode([String: PropertyListValue].self, from: Data(json.utf8))
            } catch {
                throw BinaryDecodingError(.invalidValue, offset: userInfoOffset)
            }
        }
        return Content(
            title: strings[0], body: strings[1], action: strings[2], launchImage: strings[3], sound: strings[4],
            badgeChange: badge, userInfo: userInfo, category: strings[5], threadId: strings[6])
    }
}

extension Content {
    /// Binary form of the attention fields: u8 parts (1 subtitle, 2 interruptionLevel,
    /// 4 relevanceScore, 8 targetContentIdentifier, 16 filterCriteria, 32 `hasAction` false,
    /// 64 unhandled, 128 collapseKey), then subtitle string?, level u8
    /// (`InterruptionLevel.binaryTag`)?, relevanceScore f64?, targetContentIdentifier string?,
    /// filterCriteria string?, unhandled u8 (`UnhandledPolicy.binaryTag`)?, collapseKey string?.
    func writeAttention(to writer: inout ByteWriter) {
        writer.writeByte(
            (subtitle != nil ? 1 : 0) | (interruptionLevel != .active ? 2 : 0) | (relevanceScore != nil ? 4 : 0)
                | (targetContentIdentifier != nil ? 8 : 0) | (filterCriteria != nil ? 16 : 0) | (hasAction ? 0 : 32)
                | (unhandled != .stack ? 64 : 0) | (collapseKey != nil ? 128 : 0))
        if let subtitle { writer.writeString(subtitle, .fixed32) }
        if interruptionLevel != .active { writer.writeByte(interruptionLevel.binaryTag) }
        if let relevanceScore { writer.writeDouble(relevanceScore) }
        if let targetContentIdentifier { writer.writeString(targetContentIdentifier, .fixed32) }
        if let filterCriteria { writer.writeString(filterCriteria, .fixed32) }
        if unhandled != .stack { writer.writeByte(unhandled.binaryTag) }
        if let collapseKey { writer.writeString(collapseKey, .fixed32) }
    }

    /// Binary form of the extended fields: u8 parts (1 attachments, 2 titleKey, 4 titleArgs,
    /// 8 bodyKey, 16 bodyArgs, 32 soundVolume, 64 throttled), then each present one in that
    /// order, in the reminder's binary form (`Content.writeExtendedBinary`).
    func writeExtended(to writer: inout ByteWriter) {
        writer.writeByte(
            (attachments != nil ? 1 : 0) | (titleKey != nil ? 2 : 0) | (titleArgs != nil ? 4 : 0) | (bodyKey != nil ? 8 : 0)
                | (bodyArgs != nil ? 16 : 0) | (soundVolume != nil ? 32 : 0) | (throttled != .hold ? 64 : 0))
        writeExtendedBinary(to: &writer)
    }

    mutating func readExtended(from reader: inout ByteReader) throws(BinaryDecodingError) {
        let offset = reader.offset
        let parts = try reader.readByte()
        guard parts & ~127 == 0 else { throw BinaryDecodingError(.unknownFlags, offset: offset) }
        try readExtendedBinary(from: &reader, attachments: parts & 1 != 0, titleKey: parts & 2 != 0, titleArgs: parts & 4 != 0,
                               bodyKey: parts & 8 != 0, bodyArgs: parts & 16 != 0, soundVolume: parts & 32 != 0,
                               throttled: parts & 64 != 0)
    }

    mutating func readAttention(from reader: inout ByteReader) throws(BinaryDecodingError) {
        let parts = try reader.readByte()
        if parts & 1 != 0 { subtitle = try reader.readString(.fixed32) }
        if parts & 2 != 0 { interruptionLevel = try reader.readTag(InterruptionLevel.init(binaryTag:)) }
        if parts & 4 != 0 { relevanceScore = try reader.readDouble() }
        if parts & 8 != 0 { targetContentIdentifier = try reader.readString(.fixed32) }
        if parts & 16 != 0 { filterCriteria = try reader.readString(.fixed32) }
        hasAction = parts & 32 == 0
        if parts & 64 != 0 { unhandled = try reader.readTag(UnhandledPolicy.init(binaryTag:)) }
        if parts & 128 != 0 { collapseKey = try reader.readString(.fixed32) }
    }
}

extension WireCodec {
    /// A dispatch batch as two frames: JSON of everything but the firings, then the firings
    /// in binary (`Firing.write`). The internal hot path; the public formats stay JSON.
    public func encodeFrames(_ batch: DispatchBatch) -> [Data] {
        var header = batch
        header.firings = []
        var writer = ByteWriter(capacity: 4 + batch.firings.count * 160)
        writer.writeCount(batch.firings.count, .fixed32)
        for firing in batch.firings { firing.write(to: &writer, contentCoder: plainEncoder) }
        return [encode(header), Data(writer.bytes)]
    }

    /// Decodes `encodeFrames(_: DispatchBatch)`, or a single JSON frame.
    /// - Throws: `WireError` `.malformed` for a wrong frame count, or a firings frame that
    ///   does not decode (its message names the ``BinaryDecodingError``).
    public func decodeDispatch(_ frames: [Data]) throws(WireError) -> DispatchBatch {
        guard frames.count == 1 || frames.count == 2 else {
            throw WireError(.malformed, "a dispatch message has 1 or 2 frames, not \(frames.count)")
        }
        var batch = try decode(DispatchBatch.self, from: frames[0])
        guard frames.count == 2 else { return batch }
        do {
            var reader = ByteReader([UInt8](frames[1])[...])
            let count = try reader.readCount(.fixed32, minimumElementSize: Self.minimumFiringBytes)
            var firings: [Firing] = []
            firings.reserveCapacity(count)
            for _ in 0..<count { firings.append(try Firing.read(from: &reader, contentDecoder: plainDecoder)) }
            try reader.expectEnd()
            batch.firings = firings
        } catch {
            throw WireError(.malformed, "the firings frame does not decode: \(error)")
        }
        return batch
    }

    /// A worker message as one JSON frame, plus a binary frame of acknowledgements when there
    /// are any: count u32, then per ack the firing id (`FiringID.write`), firedAt, attempt u32, epoch u64.
    public func encodeFrames(_ message: WorkerMessage) -> [Data] {
        guard !message.acks.isEmpty else { return [encode(message)] }
        var header = message
        header.acks = []
        var writer = ByteWriter(capacity: 4 + message.acks.count * 64)
        writer.writeCount(message.acks.count, .fixed32)
        for ack in message.acks {
            ack.firingId.write(to: &writer)
            writer.writeInstant(ack.firedAt)
            writer.writeFixed32(UInt32(clamping: ack.attempt))
            writer.writeFixed64(ack.epoch)
        }
        return [encode(header), Data(writer.bytes)]
    }

    /// Decodes `encodeFrames(_: WorkerMessage)`.
    /// - Throws: `WireError` `.malformed` for a wrong frame count, or an acknowledgements
    ///   frame that does not decode (its message names the ``BinaryDecodingError``).
    public func decodeWorkerMessage(_ frames: [Data]) throws(WireError) -> WorkerMessage {
        guard frames.count == 1 || frames.count == 2 else {
            throw WireError(.malformed, "a worker message has 1 or 2 frames, not \(frames.count)")
        }
        var message = try decode(WorkerMessage.self, from: frames[0])
        guard frames.count == 2 else { return try message.validated() }
        do {
            var reader = ByteReader([UInt8](frames[1])[...])
            let count = try reader.readCount(.fixed32, minimumElementSize: Self.minimumAcknowledgementBytes)
            var acks: [WorkerMessage.Acknowledgement] = []
            acks.reserveCapacity(count)
            for _ in 0..<count {
                let firingId = try FiringID.read(from: &reader)
                let firedAt = try reader.readSupportedInstant()
                let attempt = try reader.readFixed32()
                let epoch = try reader.readFixed64()
                acks.append(.init(firingId: firingId, firedAt: firedAt, attempt: Int(attempt), epoch: epoch))
            }
            try reader.expectEnd()
            message.acks = acks
        } catch {
            throw WireError(.malformed, "the acknowledgements frame does not decode: \(error)")
        }
        return try message.validated()
    }

    /// The fewest bytes one firing takes in the binary frame: three empty strings, dueAt,
    /// attempt, flags, seven absent content strings, no badge, no userInfo.
    static let minimumFiringBytes = 3 * 4 + 8 + 4 + 1 + 7 * 4 + 1 + 4
    /// The fewest bytes one acknowledgement takes: an empty firing id, firedAt, attempt, epoch.
    static let minimumAcknowledgementBytes = 4 + 8 + 4 + 8
}
