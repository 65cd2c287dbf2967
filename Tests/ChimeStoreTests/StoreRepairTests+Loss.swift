import ChimeStore
import ChimeTestSupport
import Foundation
import Testing

/// Issue 25, item 4: `store verify` and `store repair` name what damage loses, by id, and
/// tell acknowledged data (records written whole) from a torn tail.
extension StoreRepairTests {
    @Test func aRepairNamesTheSubjectsOfTheRecordsItDrops() throws {
        try populate(40)
        let segment = try #require(try segmentPaths(journalDirectory).only)
        let inSegment = try records(ofSegment: segment)
        // Record 13 (`record-12:…`) gets a damaged byte after its name; record 11 is
        // overwritten with noise past any correction.
        let flipped = inSegment[12]
        try flipByte(segment, at: flipped.offset + RecordFraming.recordHeaderLength + 12)
        let scrambled = inSegment[10]
        var random = SeededRandomNumberGenerator(seed: 11)
        try overwrite(
            segment, at: scrambled.offset + RecordFraming.recordHeaderLength,
            with: (0..<scrambled.payload.count).map { _ in UInt8(truncatingIfNeeded: random.next()) })

        let verified = try FileStore.verify(directory: directory, codec: testCodec)
        let wouldLose = try #require(verified.loss)
        #expect(wouldLose.isAcknowledgedDataLost)
        #expect(wouldLose.sequences == [11..<12, 13..<14])

        let report = try FileStore.repair(directory: directory, codec: testCodec)
        let loss = report.loss
        #expect(loss.sequences == [11..<12, 13..<14])
        #expect(loss.isAcknowledgedDataLost)
        #expect(loss.tornTailBytes == 0)
        // flipByte xors 0x5A: four bits, beyond a single-bit correction; the bytes still decode.
        #expect(loss.subjects["records"].contains { $0.hasPrefix("record-12:") }, "\(loss.lines)")
        #expect(loss.exactRecords + loss.possiblyAlteredRecords + loss.unreadableRecords == 2)
        #expect(loss.lines.first?.hasPrefix("ACKNOWLEDGED DATA LOST") == true)
        #expect(report.after.verdict == .clean)
    }

    @Test func aSingleFlippedBitIsReadExactlyAndNamed() throws {
        try populate(20)
        let segment = try #require(try segmentPaths(journalDirectory).only)
        let victim = try records(ofSegment: segment)[8]  // `record-8:…`
        let data = try Data(contentsOf: URL(fileURLWithPath: segment))
        try overwrite(segment, at: victim.offset + 30, with: [data[victim.offset + 30] ^ 0x04])
        let loss = try FileStore.repair(directory: directory, codec: testCodec).loss
        #expect(loss.exactRecords == 1)
        #expect(loss.subjects["records"] == testCodec.subjects(of: makeEntries(1, from: 8)[0])["records"])
        #expect(loss.lines.contains { $0.hasPrefix("  records: record-8:") })
        #expect(loss.sequences == [9..<10])
    }

    @Test func aTornTailIsNotAcknowledgedDataLoss() throws {
        try populate(30)
        let segment = try #require(try segmentPaths(journalDirectory).only)
        try truncate(segment, to: try fileSize(segment) - 5)
        let verified = try FileStore.verify(directory: directory, codec: testCodec)
        #expect(verified.verdict == .recoverable)
        #expect(verified.loss?.isAcknowledgedDataLost == false)
        let loss = try FileStore.repair(directory: directory, codec: testCodec).loss
        #expect(!loss.isAcknowledgedDataLost)
        #expect(loss.tornTailBytes > 0)
        #expect(loss.subjects.isEmpty)
    }

    @Test func readingDamagedBytesIsTotal() {
        var random = SeededRandomNumberGenerator(seed: 2025)
        let valid = { () -> [UInt8] in
            var buffer: [UInt8] = []
            let payload = Array(#"{"cancelled":{"_0":["a"],"at":1}}"#.utf8)
            payload.withUnsafeBytes { RecordFraming.appendRecord(sequence: 1, encoding: TestRecordCodec.encoding, payload: $0, to: &buffer) }
            return buffer
        }()
        for round in 0..<3_000 {
            var bytes = round % 2 == 0 ? valid : []
            bytes += (0..<Int(random.next() % 200)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if !bytes.isEmpty, round % 3 == 0 { bytes[Int(random.next() % UInt64(bytes.count))] ^= 0xFF }
            let start = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
            _ = JournalLoss.readDamaged(bytes, from: start, to: bytes.count, codec: testCodec)
        }
    }
}
