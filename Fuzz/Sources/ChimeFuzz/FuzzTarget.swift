import ChimeCoordinator
import ChimeCore
import ChimeDelivery
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

/// The decoders under fuzzing. Each must return a value or throw for any bytes; a trap, a
/// sanitizer report or a failed check below is a finding.
enum FuzzTarget: String, CaseIterable {
    /// `ControlRequest(fastJSON:)` against `StrictJSON` + `JSONDecoder`, then `decodeRequest`.
    case request
    /// `WireCodec.decodeDispatch` and `decodeWorkerMessage` on frames split from the input.
    case frames
    /// A journal segment (the input after a valid segment header, of the current format and
    /// of format 1): `RecordReader` with its groups, `StoreVerification.verify`, which decodes
    /// every entry and plans a repair of what is damaged, and a `JournalFollower`.
    case journal
    /// `DurableState.decodeSnapshot(_:seed:)` (format 4 and the legacy format 3), and a decoded
    /// state re-encoded decodes to an equal state.
    case snapshot
    /// `RecurrenceRule(parsing:)`.
    case rrule
    /// `ICalendarParser.parse`.
    case icalendar
    /// `RFC3339.parseInstant`, and a parsed instant formatted and parsed again.
    case rfc3339
    /// `FiringID(_:)`: a parsed id's text parses to the same id.
    case firingid
    /// Subscription messages into a live `EventForwarder` over `ipc://` (``SubscriptionHarness``).
    case subscription
    /// `LeaseRecord.parse` (a parsed record's bytes parse to the same record) and the
    /// damaged-record reader of `store repair` (`JournalLoss.readDamaged`) on the input.
    case lease
    /// A delivery provider's answer: the first two bytes a status, the rest a body and a
    /// `Retry-After` value, through `WebhookClassification`, `APNsResponse` and `FCMResponse`
    /// classification, `RetryAfter.seconds` and `Base64`'s strict decoders.
    case provider
    /// The map register's file (`SlotMapRegisterFile.decode`, which the coordinator and
    /// `chime shards` read): a decoded record passes `validate()` and decodes equal from its
    /// own bytes.
    case register

    func run(_ bytes: [UInt8]) {
        switch self {
        case .request: Self.fuzzRequest(bytes)
        case .frames: Self.fuzzFrames(bytes)
        case .journal: JournalHarness.shared.fuzz(bytes)
        case .snapshot: Self.fuzzSnapshot(bytes)
        case .rrule: _ = try? RecurrenceRule(parsing: String(decoding: bytes, as: UTF8.self))
        case .icalendar: _ = try? ICalendarParser.parse(String(decoding: bytes, as: UTF8.self))
        case .rfc3339: Self.fuzzRFC3339(bytes)
        case .firingid: Self.fuzzFiringID(bytes)
        case .subscription: SubscriptionHarness.shared.fuzz(bytes)
        case .lease: Self.fuzzLease(bytes)
        case .provider: Self.fuzzProvider(bytes)
        case .register: Self.fuzzRegister(bytes)
        }
    }

    private static func fuzzRequest(_ bytes: [UInt8]) {
        let data = Data(bytes)
        let codec = WireCodec()
        // The fast path covers only common shapes and returns nil for the rest, so the check
        // runs one way: whatever it decodes, the strict Foundation path decodes equal.
        if let fast = ControlRequest(fastJSON: data) {
            let strict: ControlRequest
            do {
                try StrictJSON.check(data)
                strict = try codec.decode(ControlRequest.self, from: data)
            } catch {
                fatalError("the fast path decoded what the strict path refuses (\(error)): \(fast)")
            }
            guard strict == fast else { fatalError("the paths disagree: fast \(fast), strict \(strict)") }
        }
        _ = try? codec.decodeRequest(data)
    }

    private static func fuzzFrames(_ bytes: [UInt8]) {
        let frames = FrameSplitter.frames(from: bytes)
        let codec = WireCodec()
        _ = try? codec.decodeDispatch(frames)
        _ = try? codec.decodeWorkerMessage(frames)
    }

    private static func fuzzProvider(_ bytes: [UInt8]) {
        guard bytes.count >= 2 else { return }
        let status = Int(bytes[0]) << 8 | Int(bytes[1])
        let body = Data(bytes.dropFirst(2))
        let text = String(decoding: body, as: UTF8.self)
        let retryAfter = RetryAfter.seconds(text, now: Date(timeIntervalSince1970: 1_800_000_000))
        if let retryAfter, !(0...86_400).contains(retryAfter) { fatalError("Retry-After \(retryAfter) outside 0...86400 for \(text)") }
        _ = WebhookClassification.classify(status: status, body: body, retryAfter: retryAfter)
        _ = APNsResponse.classify(status: status, body: body, retryAfter: retryAfter)
        _ = FCMResponse.classify(status: status, body: body, retryAfter: retryAfter)
        _ = Base64.decode(text)
        _ = Base64.decodeURL(text)
    }

    private static func fuzzRegister(_ bytes: [UInt8]) {
        guard let record = try? SlotMapRegisterFile.decode(Data(bytes)) else { return }
        do {
            try record.validate()
            guard try SlotMapRegisterFile.decode(SlotMapRegisterFile.encode(record)) == record else {
                fatalError("a decoded register decodes to another record after encoding: \(record)")
            }
        } catch {
            fatalError("a decoded register fails its own checks or its encoding does not decode: \(error)")
        }
    }

    private static func fuzzLease(_ bytes: [UInt8]) {
        if let record = LeaseRecord.parse(bytes), LeaseRecord.parse(record.bytes) != record {
            fatalError("a parsed lease record does not parse back from its bytes: \(record)")
        }
        _ = JournalLoss.readDamaged(bytes, from: 0, to: bytes.count)
    }

    private static func fuzzSnapshot(_ bytes: [UInt8]) {
        let seed = CoordinatorConfiguration().durableSettings
        guard let decoded = try? DurableState.decodeSnapshot(Data(bytes), seed: seed) else { return }
        // A crafted snapshot whose reminder held a NaN instant (found here, 2026-12-02)
        // decoded into a state not equal to itself; such instants are refused now.
        guard decoded.state == decoded.state else { fatalError("a decoded snapshot's state is not equal to itself") }
        do {
            let again = try DurableState.decodeSnapshot(decoded.state.encodedSnapshot(takenAt: decoded.takenAt), seed: seed)
            guard again.state == decoded.state else { fatalError("a decoded snapshot decodes to another state after encoding") }
        } catch {
            fatalError("a decoded snapshot does not decode after encoding: \(error)")
        }
    }

    private static func fuzzRFC3339(_ bytes: [UInt8]) {
        guard let instant = try? RFC3339.parseInstant(String(decoding: bytes, as: UTF8.self)) else { return }
        let text = RFC3339.format(instant)
        guard (try? RFC3339.parseInstant(text)) != nil else { fatalError("\(text) does not parse again") }
    }

    private static func fuzzFiringID(_ bytes: [UInt8]) {
        guard let id = FiringID(String(decoding: bytes, as: UTF8.self)) else { return }
        guard FiringID(id.text) == id else { fatalError("\(id.text) does not parse back to the same firing id") }
    }
}

/// Frames for the binary decoders: each frame is a u16 little-endian length and that many
/// bytes; whatever is left after the last whole frame is one more frame.
enum FrameSplitter {
    static func frames(from bytes: [UInt8]) -> [Data] {
        var frames: [Data] = []
        var offset = 0
        while bytes.count - offset >= 2 {
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
            guard length <= bytes.count - offset - 2 else { break }
            frames.append(Data(bytes[(offset + 2)..<(offset + 2 + length)]))
            offset += 2 + length
        }
        if offset < bytes.count { frames.append(Data(bytes[offset...])) }
        return frames
    }

    static func join(_ frames: [Data]) -> [UInt8] {
        var bytes: [UInt8] = []
        for frame in frames {
            bytes += [UInt8(frame.count & 0xFF), UInt8(frame.count >> 8)]
            bytes += frame
        }
        return bytes
    }
}
