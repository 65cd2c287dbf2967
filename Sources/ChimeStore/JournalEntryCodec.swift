import Foundation

/// Turns journal entries into record payloads and back (UTF-8 JSON of their `Codable`
/// form), telling an entry kind from a newer version apart from a damaged payload.
struct JournalEntryCodec {
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    func encode(_ entry: JournalEntry) throws -> Data {
        do {
            return try encoder.encode(entry)
        } catch {
            throw JournalError(.invalidEntry, message: "cannot encode journal entry: \(error)")
        }
    }

    /// Decodes the payload of a checksummed record.
    /// - Throws: `.unknownEntryKind` for an encoding byte or a JSON kind this version does
    ///   not know; `.undecodableEntry` for a known kind that does not decode.
    func decode(_ record: RecordReader.Record, path: String) throws -> JournalEntry {
        if record.encoding == CompactEntryEncoding.encoding {
            do {
                return try CompactEntryEncoding.decode(record.payload)
            } catch {
                throw JournalError(
                    .undecodableEntry, path: path, offset: UInt64(record.offset),
                    message: "record \(record.sequence) holds a compact entry that does not decode (\(error))")
            }
        }
        guard record.encoding == RecordFraming.jsonEntryEncoding else {
            throw JournalError(
                .unknownEntryKind, path: path, offset: UInt64(record.offset),
                message:
                    "record \(record.sequence) has payload encoding \(record.encoding), which this version does not know (written by a newer version?)"
            )
        }
        let payload = Data(record.payload)
        do {
            return try decoder.decode(JournalEntry.self, from: payload)
        } catch {
            // The synthesized enum decoder reports a key naming no case as a type mismatch
            // at the top level ("Invalid number of keys found").
            if case DecodingError.typeMismatch(_, let context) = error, context.codingPath.isEmpty,
                let object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any],
                object.count == 1, let kind = object.keys.first
            {
                throw JournalError(
                    .unknownEntryKind, path: path, offset: UInt64(record.offset),
                    message:
                        "record \(record.sequence) holds a '\(kind)' entry, which this version does not know (written by a newer version?)"
                )
            }
            throw JournalError(
                .undecodableEntry, path: path, offset: UInt64(record.offset),
                message: "record \(record.sequence) does not decode: \(error)")
        }
    }
}
