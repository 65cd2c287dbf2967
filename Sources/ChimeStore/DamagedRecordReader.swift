import ChimeCore
/// Reads what it can from a stretch of a segment that holds no valid record, so that a
/// repair can name what it drops: for each record in the stretch, the record as written when
/// the damage is one flipped bit (found by the CRC-32C, which pins any single-bit error in a
/// record down to one position), else the entry its bytes still decode to (possibly
/// altered by the damage), else nothing — an unreadable record whose ids cannot be named.
///
/// Total: any bytes give a result; never traps, reads only inside the stretch.
enum DamagedRecordReader {
    /// What one stretch held.
    struct Reading<Record> {
        /// Records read, each with whether a bit was corrected (`true`: exact) or the bytes
        /// decoded without a checksum match (`false`: possibly altered).
        var entries: [(entry: Record, isExact: Bool)] = []
        /// Stretches of bytes that held a record header but nothing readable.
        var unreadableRecords = 0
    }

    /// The largest record whose single-bit errors are searched for (each candidate costs a
    /// checksum of the record: quadratic in its size).
    static let correctionLimit = 4096

    /// Reads `bytes[start..<end]` record by record, as records of `recordVersion` (the
    /// segment's format; group marks are read and ignored).
    static func read<Codec: JournalRecordCodec>(
        _ bytes: [UInt8], from start: Int, to end: Int, recordVersion: UInt8 = RecordFraming.recordFormatVersion, codec: Codec
    ) -> Reading<Codec.Record> {
        var reading = Reading<Codec.Record>()
        let header = RecordFraming.recordHeaderLength
        var position = max(0, start)
        let end = min(end, bytes.count)
        while position < end {
            if bytes[position..<end].allSatisfy({ $0 == 0 }) { break }
            guard end - position >= header else {
                reading.unreadableRecords += 1
                break
            }
            if let (record, exact) = recover(bytes, at: position, end: end, recordVersion: recordVersion),
                let entry = try? codec.decode(record, path: "")
            {
                reading.entries.append((entry, exact))
                position += header + record.payload.count
                continue
            }
            reading.unreadableRecords += 1
            position = nextPlausibleHeader(in: bytes, after: position, end: end, recordVersion: recordVersion) ?? end
        }
        return reading
    }

    /// The record at `offset`: its bytes with one bit corrected when that makes the checksum
    /// pass (`exact`), or its bytes as they are when only a decode can tell.
    static func recover(
        _ bytes: [UInt8], at offset: Int, end: Int, recordVersion: UInt8 = RecordFraming.recordFormatVersion
    ) -> (RecordReader.Record, exact: Bool)? {
        let header = RecordFraming.recordHeaderLength
        let room = end - offset - header
        let declared = Int(bytes.loadLittleEndian(UInt32.self, at: offset + 4))
        // The length as written, a length with one bit flipped back, or one reaching the end.
        var lengths = [declared] + (0..<32).map { declared ^ (1 << $0) } + [room]
        lengths = lengths.filter { $0 >= 0 && $0 <= room && $0 <= RecordFraming.maximumPayloadLength }
        for length in lengths {
            var candidate = Array(bytes[offset..<(offset + header + length)])
            candidate.replaceSubrange(0..<3, with: RecordFraming.recordMagic + [recordVersion])
            withUnsafeBytes(of: UInt32(length).littleEndian) { candidate.replaceSubrange(4..<8, with: $0) }
            if checksumMatches(candidate) { return (record(candidate, recordVersion: recordVersion), true) }
        }
        guard declared <= room else { return nil }
        var candidate = Array(bytes[offset..<(offset + header + declared)])
        candidate.replaceSubrange(0..<3, with: RecordFraming.recordMagic + [recordVersion])
        if candidate.count <= correctionLimit {
            for index in 3..<candidate.count {
                for bit in 0..<8 {
                    candidate[index] ^= UInt8(1) << UInt8(bit)
                    if checksumMatches(candidate) { return (record(candidate, recordVersion: recordVersion), true) }
                    candidate[index] ^= UInt8(1) << UInt8(bit)
                }
            }
        }
        return (record(candidate, recordVersion: recordVersion), false)
    }

    private static func checksumMatches(_ candidate: [UInt8]) -> Bool {
        var crc = CRC32C()
        crc.update(candidate[0..<16])
        crc.update(candidate[RecordFraming.recordHeaderLength...])
        return crc.value == candidate.loadLittleEndian(UInt32.self, at: 16)
    }

    private static func record(_ candidate: [UInt8], recordVersion: UInt8) -> RecordReader.Record {
        let (encoding, continuesGroup) = RecordFraming.splitEncodingByte(candidate[3], recordVersion: recordVersion)
        return RecordReader.Record(
            sequence: candidate.loadLittleEndian(UInt64.self, at: 8), encoding: encoding, offset: 0,
            payload: candidate[RecordFraming.recordHeaderLength...], continuesGroup: continuesGroup)
    }

    /// The next offset after `offset` where a record magic and `recordVersion` start, if any.
    private static func nextPlausibleHeader(in bytes: [UInt8], after offset: Int, end: Int, recordVersion: UInt8) -> Int? {
        var position = offset + 1
        while position + RecordFraming.recordHeaderLength <= end {
            if bytes[position] == RecordFraming.recordMagic[0], bytes[position + 1] == RecordFraming.recordMagic[1],
                bytes[position + 2] == recordVersion
            {
                return position
            }
            position += 1
        }
        return nil
    }
}
