import ChimeCore
import ChimeStore
import Foundation

/// Turns journal entries into record payloads and back: the hot kinds in their compact
/// binary form (`CompactEntryEncoding`, encoding byte 2), the rest as UTF-8 JSON of their
/// `Codable` form (encoding byte 4; 1 for the JSON of earlier versions, whose ids name no
/// recipient), telling an entry kind from a newer version apart from a damaged payload.
public struct JournalEntryCodec: JournalRecordCodec, Sendable {
    /// The payload encoding byte of a JSON-encoded `JournalEntry` (reminder keys and firing ids
    /// name their recipient).
    public static let jsonEncoding: UInt8 = 4
    /// The payload encoding byte of the JSON entries of earlier versions: their reminder ids
    /// and firing ids (`<reminderId>@<dueAt>`) name no recipient; a recovery resolves them.
    public static let legacyJSONEncoding: UInt8 = 1
    /// One codec for callers that keep none of their own (JSON coders are costly to make).
    public static let shared = JournalEntryCodec()

    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()
    private let legacyDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.userInfo[FiringID.legacyTextKey] = true
        return decoder
    }()

    /// A codec with its own JSON coders.
    public init() {}

    /// The compact payload of a hot entry, else its JSON.
    /// - Throws: `JournalError` `.invalidEntry` when the entry cannot be encoded as JSON.
    public func encode(_ entry: JournalEntry) throws -> JournalRecordPayload {
        if let compact = CompactEntryEncoding.encode(entry) {
            return JournalRecordPayload(encoding: CompactEntryEncoding.encoding, bytes: compact)
        }
        do {
            return JournalRecordPayload(encoding: Self.jsonEncoding, bytes: [UInt8](try encoder.encode(entry)))
        } catch {
            throw JournalError(.invalidEntry, message: "cannot encode journal entry: \(error)")
        }
    }

    /// Decodes the payload of a checksummed record.
    /// - Throws: `JournalError` `.unknownEntryKind` for an encoding byte or a JSON kind this
    ///   version does not know; `.undecodableEntry` for a known kind that does not decode.
    public func decode(_ payload: ArraySlice<UInt8>, encoding: UInt8) throws -> JournalEntry {
        if encoding == CompactEntryEncoding.encoding {
            do {
                return try CompactEntryEncoding.decode(payload)
            } catch {
                throw JournalError(.undecodableEntry, message: "holds a compact entry that does not decode (\(error))")
            }
        }
        let isLegacy = encoding == Self.legacyJSONEncoding
        guard encoding == Self.jsonEncoding || isLegacy else {
            throw JournalError(
                .unknownEntryKind,
                message: "has payload encoding \(encoding), which this version does not know (written by a newer version?)")
        }
        let payload = Data(payload)
        do {
            return try (isLegacy ? legacyDecoder : decoder).decode(JournalEntry.self, from: payload)
        } catch {
            // The synthesized enum decoder reports a key naming no case as a type mismatch
            // at the top level ("Invalid number of keys found").
            if case DecodingError.typeMismatch(_, let context) = error, context.codingPath.isEmpty,
                let object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any],
                object.count == 1, let kind = object.keys.first
            {
                throw JournalError(
                    .unknownEntryKind,
                    message: "holds a '\(kind)' entry, which this version does not know (written by a newer version?)")
            }
            throw JournalError(.undecodableEntry, message: "does not decode: \(error)")
        }
    }

    /// The reminders, firings, recipients and requests `entry` is about.
    public func subjects(of entry: JournalEntry) -> RecordSubjects { entry.subjects.recordSubjects }

    /// The epoch of a `started` entry.
    public func epoch(of entry: JournalEntry) -> UInt64? {
        if case .started(let epoch, _, _) = entry { epoch } else { nil }
    }
}
