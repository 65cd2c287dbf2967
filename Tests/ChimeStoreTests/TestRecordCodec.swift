import ChimeStore

/// What the store tests journal: bytes, or an epoch. The store knows records only through
/// their codec, so these tests need none of the coordinator's vocabulary.
enum TestRecord: Hashable, Sendable {
    /// Opaque bytes.
    case data([UInt8])
    /// A fencing epoch (`JournalRecordCodec.epoch(of:)`).
    case epoch(UInt64)
}

/// Payload encoding 7: a kind byte (1 data, then the bytes; 2 epoch, then 8 bytes
/// little-endian). Another encoding byte or kind is from "a newer version".
struct TestRecordCodec: JournalRecordCodec {
    static let encoding: UInt8 = 7
    /// The kind of id `subjects(of:)` names: a data record's bytes as text.
    static let recordsKind = RecordSubjects.Kind(name: "records")

    func encode(_ record: TestRecord) -> JournalRecordPayload {
        switch record {
        case .data(let bytes): JournalRecordPayload(encoding: Self.encoding, bytes: [1] + bytes)
        case .epoch(let epoch): JournalRecordPayload(encoding: Self.encoding, bytes: [2] + withUnsafeBytes(of: epoch.littleEndian) { Array($0) })
        }
    }

    func decode(_ payload: ArraySlice<UInt8>, encoding: UInt8) throws -> TestRecord {
        guard encoding == Self.encoding else {
            throw JournalError(.unknownEntryKind, message: "has payload encoding \(encoding), which this version does not know")
        }
        switch payload.first {
        case 1:
            return .data(Array(payload.dropFirst()))
        case 2:
            guard payload.count == 9 else { throw JournalError(.undecodableEntry, message: "holds an epoch of \(payload.count - 1) bytes") }
            return .epoch(payload.dropFirst().reversed().reduce(0) { $0 << 8 | UInt64($1) })
        case let kind:
            throw JournalError(.unknownEntryKind, message: "holds a record of kind \(kind.map(String.init) ?? "none"), which this version does not know")
        }
    }

    func subjects(of record: TestRecord) -> RecordSubjects {
        var subjects = RecordSubjects()
        if case .data(let bytes) = record { subjects.insert([String(decoding: bytes, as: UTF8.self)], as: Self.recordsKind) }
        return subjects
    }

    func epoch(of record: TestRecord) -> UInt64? {
        if case .epoch(let epoch) = record { epoch } else { nil }
    }
}

/// The codec every store test uses.
let testCodec = TestRecordCodec()
