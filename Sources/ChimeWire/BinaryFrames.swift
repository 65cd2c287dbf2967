import ChimeCore
import Foundation

/// Little-endian binary writing for the internal dispatch and results frames.
struct BinaryWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    /// An instant as f64 seconds since Foundation's reference date (exact round trip).
    mutating func date(_ value: Date) { u64(value.timeIntervalSinceReferenceDate.bitPattern) }
    mutating func string(_ value: String) {
        let utf8 = value.utf8
        u32(UInt32(utf8.count))
        bytes.append(contentsOf: utf8)
    }
    mutating func optionalString(_ value: String?) {
        guard let value else { return u32(UInt32.max) }
        string(value)
    }
    mutating func data(_ value: Data) {
        u32(UInt32(value.count))
        bytes.append(contentsOf: value)
    }
}

/// Reads what `BinaryWriter` wrote; every read checks bounds and returns `nil` past the end,
/// for invalid UTF-8, and for an instant outside `RFC3339.supportedInstants` (NaN included).
struct BinaryReader {
    let bytes: [UInt8]
    var index = 0

    init(_ data: Data) { bytes = [UInt8](data) }

    var isAtEnd: Bool { index == bytes.count }

    /// How many bytes are left.
    var remainingCount: Int { bytes.count - index }

    /// A u32 element count, or `nil` when the bytes left cannot hold that many elements of
    /// at least `minimumSize` bytes each: a count must never size an allocation by itself.
    mutating func count(ofElementsAtLeast minimumSize: Int) -> Int? {
        guard let count = u32().map(Int.init), count <= remainingCount / minimumSize else { return nil }
        return count
    }

    mutating func u8() -> UInt8? {
        guard index < bytes.count else { return nil }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func u32() -> UInt32? {
        guard bytes.count - index >= 4 else { return nil }
        var value: UInt32 = 0
        for offset in 0..<4 { value |= UInt32(bytes[index + offset]) << (8 * UInt32(offset)) }
        index += 4
        return value
    }

    mutating func u64() -> UInt64? {
        guard bytes.count - index >= 8 else { return nil }
        var value: UInt64 = 0
        for offset in 0..<8 { value |= UInt64(bytes[index + offset]) << (8 * UInt64(offset)) }
        index += 8
        return value
    }

    mutating func date() -> Date? {
        guard let bits = u64() else { return nil }
        let date = Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
        return RFC3339.isSupported(date) ? date : nil
    }

    mutating func string() -> String? {
        guard let count = u32().map(Int.init), bytes.count - index >= count else { return nil }
        defer { index += count }
        return bytes[index..<index + count].withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) }
    }

    /// `.some(nil)` for an absent string, `nil` when the bytes run out.
    mutating func optionalString() -> String?? {
        guard bytes.count - index >= 4 else { return nil }
        if bytes[index..<index + 4].allSatisfy({ $0 == 0xFF }) {
            index += 4
            return .some(nil)
        }
        return string().map { .some($0) }
    }

    mutating func data() -> Data? {
        guard let count = u32().map(Int.init), bytes.count - index >= count else { return nil }
        defer { index += count }
        return Data(bytes[index..<index + count])
    }
}

extension Firing {
    /// Binary form: the firing id (`FiringID.write`), recipient, dueAt, attempt u32, flags u8
    /// (1 late, 2 seq, 4 eventAt, 8 a reminderId other than the firing id's follows, 16
    /// missed), seq u64?, eventAt?, reminderId?, missed u32?, then the content (`Content.write`).
    func write(to writer: inout BinaryWriter, contentCoder: JSONEncoder) {
        firingId.write(to: &writer)
        writer.string(recipient.rawValue)
        writer.date(dueAt)
        writer.u32(UInt32(clamping: attempt))
        let ownReminder = reminderId != firingId.reminder
        writer.u8(
            (late ? 1 : 0) | (seq != nil ? 2 : 0) | (eventAt != nil ? 4 : 0) | (ownReminder ? 8 : 0)
                | (missed != nil ? 16 : 0))
        if let seq { writer.u64(seq) }
        if let eventAt { writer.date(eventAt) }
        if ownReminder { writer.string(reminderId.rawValue) }
        if let missed { writer.u32(UInt32(clamping: missed)) }
        content.write(to: &writer, userInfoCoder: contentCoder)
    }

    static func read(from reader: inout BinaryReader, contentDecoder: JSONDecoder) -> Firing? {
        guard let firingId = FiringID.read(from: &reader), let recipient = reader.string(),
            let dueAt = reader.date(), let attempt = reader.u32(), let flags = reader.u8(), flags & ~31 == 0
        else { return nil }
        var seq: UInt64?
        if flags & 2 != 0 { guard let value = reader.u64() else { return nil }; seq = value }
        var eventAt: Date?
        if flags & 4 != 0 { guard let value = reader.date() else { return nil }; eventAt = value }
        var reminderId = firingId.reminder
        if flags & 8 != 0 { guard let value = reader.string() else { return nil }; reminderId = ReminderID(value) }
        var missed: Int?
        if flags & 16 != 0 { guard let value = reader.u32() else { return nil }; missed = Int(value) }
        guard let content = Content.read(from: &reader, userInfoDecoder: contentDecoder) else { return nil }
        var firing = Firing(
            reminderId: reminderId, recipient: RecipientID(recipient), dueAt: dueAt, content: content,
            attempt: Int(attempt), late: flags & 1 != 0, missed: missed, eventAt: eventAt)
        firing.firingId = firingId
        firing.seq = seq
        return firing
    }
}

extension FiringID {
    /// Binary form: reminder id (string), due instant (i64 Unix milliseconds), nag u32.
    func write(to writer: inout BinaryWriter) {
        writer.string(reminder.rawValue)
        writer.u64(UInt64(bitPattern: dueAtMilliseconds))
        writer.u32(nag)
    }

    static func read(from reader: inout BinaryReader) -> FiringID? {
        guard let reminder = reader.string(), let dueAt = reader.u64(), let nag = reader.u32() else { return nil }
        return FiringID(reminder: ReminderID(reminder), dueAtMilliseconds: Int64(bitPattern: dueAt), nag: nag)
    }
}

extension Content {
    /// Binary form: seven optional strings (title, body, action, launchImage, sound, category,
    /// threadId), badge (u8 0 none / 1 set + i64 / 2 increment), userInfo as JSON bytes
    /// (u32 max when absent).
    func write(to writer: inout BinaryWriter, userInfoCoder: JSONEncoder) {
        for field in [title, body, action, launchImage, sound, category, threadId] { writer.optionalString(field) }
        switch badgeChange {
        case nil: writer.u8(0)
        case .set(let number)?:
            writer.u8(1)
            writer.u64(UInt64(bitPattern: Int64(number)))
        case .increment?: writer.u8(2)
        }
        if let userInfo, let json = try? userInfoCoder.encode(userInfo) {
            writer.data(json)
        } else {
            writer.u32(UInt32.max)
        }
    }

    static func read(from reader: inout BinaryReader, userInfoDecoder: JSONDecoder) -> Content? {
        var strings: [String?] = []
        for _ in 0..<7 {
            guard let value = reader.optionalString() else { return nil }
            strings.append(value)
        }
        var badge: BadgeChange?
        switch reader.u8() {
        case 0: badge = nil
        case 1:
            guard let bits = reader.u64() else { return nil }
            badge = .set(Int(Int64(bitPattern: bits)))
        case 2: badge = .increment
        default: return nil
        }
        var userInfo: [String: PropertyListValue]?
        guard let marker = reader.optionalString() else { return nil }
        if let json = marker {
            guard let decoded = try? userInfoDecoder.decode([String: PropertyListValue].self, from: Data(json.utf8)) else {
                return nil
            }
            userInfo = decoded
        }
        return Content(
            title: strings[0], body: strings[1], action: strings[2], launchImage: strings[3], sound: strings[4],
            badgeChange: badge, userInfo: userInfo, category: strings[5], threadId: strings[6])
    }
}

extension WireCodec {
    /// A dispatch batch as two frames: JSON of everything but the firings, then the firings
    /// in binary (`Firing.write`). The internal hot path; the public formats stay JSON.
    public func encodeFrames(_ batch: DispatchBatch) -> [Data] {
        var header = batch
        header.firings = []
        var writer = BinaryWriter()
        writer.bytes.reserveCapacity(batch.firings.count * 160)
        writer.u32(UInt32(batch.firings.count))
        for firing in batch.firings { firing.write(to: &writer, contentCoder: plainEncoder) }
        return [encode(header), Data(writer.bytes)]
    }

    /// Decodes `encodeFrames(_: DispatchBatch)`, or a single JSON frame.
    /// - Throws: `WireError` `.malformed` for a wrong frame count or truncated binary.
    public func decodeDispatch(_ frames: [Data]) throws(WireError) -> DispatchBatch {
        guard frames.count == 1 || frames.count == 2 else {
            throw WireError(.malformed, "a dispatch message has 1 or 2 frames, not \(frames.count)")
        }
        var batch = try decode(DispatchBatch.self, from: frames[0])
        guard frames.count == 2 else { return batch }
        var reader = BinaryReader(frames[1])
        guard let count = reader.count(ofElementsAtLeast: Self.minimumFiringBytes) else {
            throw WireError(.malformed, "the firings frame is empty or counts more firings than it holds")
        }
        var firings: [Firing] = []
        firings.reserveCapacity(count)
        for _ in 0..<count {
            guard let firing = Firing.read(from: &reader, contentDecoder: plainDecoder) else {
                throw WireError(.malformed, "the firings frame is truncated or damaged")
            }
            firings.append(firing)
        }
        guard reader.isAtEnd else { throw WireError(.malformed, "the firings frame has trailing bytes") }
        batch.firings = firings
        return batch
    }

    /// A worker message as one JSON frame, plus a binary frame of acknowledgements when there
    /// are any: count u32, then per ack the firing id (`FiringID.write`), firedAt, attempt u32, epoch u64.
    public func encodeFrames(_ message: WorkerMessage) -> [Data] {
        guard !message.acks.isEmpty else { return [encode(message)] }
        var header = message
        header.acks = []
        var writer = BinaryWriter()
        writer.bytes.reserveCapacity(message.acks.count * 64)
        writer.u32(UInt32(message.acks.count))
        for ack in message.acks {
            ack.firingId.write(to: &writer)
            writer.date(ack.firedAt)
            writer.u32(UInt32(clamping: ack.attempt))
            writer.u64(ack.epoch)
        }
        return [encode(header), Data(writer.bytes)]
    }

    /// Decodes `encodeFrames(_: WorkerMessage)`.
    /// - Throws: `WireError` `.malformed` for a wrong frame count or truncated binary.
    public func decodeWorkerMessage(_ frames: [Data]) throws(WireError) -> WorkerMessage {
        guard frames.count == 1 || frames.count == 2 else {
            throw WireError(.malformed, "a worker message has 1 or 2 frames, not \(frames.count)")
        }
        var message = try decode(WorkerMessage.self, from: frames[0])
        guard frames.count == 2 else { return try message.validated() }
        var reader = BinaryReader(frames[1])
        guard let count = reader.count(ofElementsAtLeast: Self.minimumAcknowledgementBytes) else {
            throw WireError(.malformed, "the acknowledgements frame is empty or counts more acknowledgements than it holds")
        }
        var acks: [WorkerMessage.Acknowledgement] = []
        acks.reserveCapacity(count)
        for _ in 0..<count {
            guard let firingId = FiringID.read(from: &reader), let firedAt = reader.date(), let attempt = reader.u32(),
                let epoch = reader.u64()
            else { throw WireError(.malformed, "the acknowledgements frame is truncated") }
            acks.append(.init(firingId: firingId, firedAt: firedAt, attempt: Int(attempt), epoch: epoch))
        }
        guard reader.isAtEnd else { throw WireError(.malformed, "the acknowledgements frame has trailing bytes") }
        message.acks = acks
        return try message.validated()
    }

    /// The fewest bytes one firing takes in the binary frame: three empty strings, dueAt,
    /// attempt, flags, seven absent content strings, no badge, no userInfo.
    static let minimumFiringBytes = 3 * 4 + 8 + 4 + 1 + 7 * 4 + 1 + 4
    /// The fewest bytes one acknowledgement takes: an empty firing id, firedAt, attempt, epoch.
    static let minimumAcknowledgementBytes = 4 + 8 + 4 + 8
}
