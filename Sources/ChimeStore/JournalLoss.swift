/// What damage to a journal loses, by id: the summary `chime store verify` and `chime store
/// repair` print, and whose `isAcknowledgedDataLost` decides their exit status.
///
/// Only records written whole can have been acknowledged (under `fsync: always` a reply
/// waits for its records' `fdatasync`); a torn tail never was. So the bytes of a torn tail
/// are counted apart, and everything else dropped is acknowledged data lost — named by the
/// reminder, firing, recipient and request ids its records still show, with counts of the
/// records read exactly (a single flipped bit, corrected), read without a checksum (ids
/// possibly altered) and not readable at all (ids unknown; the lost sequence numbers say
/// how many records that was).
public struct JournalLoss: Sendable {
    /// The ids the dropped whole records were about.
    public var subjects = RecordSubjects()
    /// Records read exactly.
    public var exactRecords = 0
    /// Records read without a checksum match.
    public var possiblyAlteredRecords = 0
    /// Records whose ids cannot be named.
    public var unreadableRecords = 0
    /// Bytes dropped from records written whole.
    public var writtenBytes = 0
    /// Bytes of the torn tail (never acknowledged).
    public var tornTailBytes = 0
    /// The sequence numbers lost (gap records).
    public var sequences: [Range<UInt64>] = []

    /// Sums the dropped ranges of a repair (or of its plan).
    public init(_ ranges: [StoreRepairReport.DroppedRange] = [], sequences: [Range<UInt64>] = []) {
        self.sequences = sequences
        for range in ranges {
            if range.isTornTail {
                tornTailBytes += range.bytes
                continue
            }
            // Zero fill between valid records is a page that never reached the disk: it held
            // records all the same.
            writtenBytes += range.bytes
            subjects.formUnion(range.subjects)
            exactRecords += range.exactRecords
            possiblyAlteredRecords += range.possiblyAlteredRecords
            unreadableRecords += range.unreadableRecords
        }
    }

    /// Whether records written whole are (or would be) dropped: acknowledged data lost.
    public var isAcknowledgedDataLost: Bool { writtenBytes > 0 }

    /// How many sequence numbers are lost.
    public var sequenceCount: UInt64 { sequences.reduce(0) { $0 + UInt64($1.count) } }

    /// Lines for people: the sequence numbers, then every id by kind.
    public var lines: [String] {
        guard isAcknowledgedDataLost else {
            return tornTailBytes > 0 ? ["torn tail: \(tornTailBytes) bytes of a write a crash cut short (never acknowledged)"] : []
        }
        var lines = [
            "ACKNOWLEDGED DATA LOST: \(writtenBytes) bytes of records written whole; sequence numbers "
                + sequences.map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound - 1)" }.joined(separator: ", ")
                + " (\(sequenceCount) records: \(exactRecords) read exactly, \(possiblyAlteredRecords) read with ids possibly altered, \(unreadableRecords) unreadable)"
        ]
        for kind in subjects.kinds where !subjects[kind.name].isEmpty {
            lines.append("  \(kind.label): " + subjects[kind.name].sorted().joined(separator: " "))
        }
        if unreadableRecords > 0 {
            lines.append("  \(unreadableRecords) unreadable records: their ids cannot be named (compare with your own records for the time of the damage)")
        }
        if tornTailBytes > 0 { lines.append("torn tail: \(tornTailBytes) bytes of a write a crash cut short (never acknowledged)") }
        return lines
    }

    /// What `DamagedRecordReader` reads in `bytes[start..<end]`: the ids of the readable
    /// records (decoded with `codec`), and how many were not readable. Total on any bytes
    /// (for fuzzing).
    public static func readDamaged<Codec: JournalRecordCodec>(
        _ bytes: [UInt8], from start: Int, to end: Int, codec: Codec
    ) -> (subjects: RecordSubjects, unreadable: Int) {
        let reading = DamagedRecordReader.read(bytes, from: start, to: end, codec: codec)
        var subjects = RecordSubjects()
        for (entry, _) in reading.entries { subjects.formUnion(codec.subjects(of: entry)) }
        return (subjects, reading.unreadableRecords)
    }
}
