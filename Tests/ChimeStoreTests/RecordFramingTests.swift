import ChimeCore
import ChimeStore
import Foundation
import Testing

@Suite struct RecordFramingTests {
    @Test(arguments: [
        ("", UInt32(0)),
        ("a", 0xC1D0_4330),
        ("123456789", 0xE306_9283),
        ("The quick brown fox jumps over the lazy dog", 0x2262_0404),
    ])
    func checksumMatchesPublishedCRC32CValues(text: String, expected: UInt32) {
        #expect(CRC32C.checksum(Array(text.utf8)) == expected)
    }

    /// RFC 3720 §B.4 test vectors.
    @Test func checksumMatchesTheISCSIVectors() {
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum((0..<32).map { UInt8(31 - $0) }) == 0x113F_DB5C)
    }

    @Test func checksumIsTheSameInPieces() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var crc = CRC32C()
        crc.update(bytes[0..<3])
        crc.update(bytes[3..<517])
        crc.update(bytes[517...])
        #expect(crc.value == CRC32C.checksum(bytes))
    }

    @Test func readsBackFramedRecordsInOrder() {
        var buffer = RecordFraming.makeSegmentHeader(firstSequence: 41)
        for (index, text) in ["alpha", "", "gamma"].enumerated() {
            Array(text.utf8).withUnsafeBytes {
                RecordFraming.appendRecord(sequence: 41 + UInt64(index), encoding: TestRecordCodec.encoding, payload: $0, to: &buffer)
            }
        }
        var reader = RecordReader(bytes: buffer, startingAt: RecordFraming.segmentHeaderLength, expectedSequence: 41)
        var payloads: [String] = []
        while let record = reader.next() {
            payloads.append(String(decoding: record.payload, as: UTF8.self))
        }
        #expect(payloads == ["alpha", "", "gamma"])
        #expect(reader.damage == nil)
        #expect(reader.offset == buffer.count)
        #expect(reader.expectedSequence == 44)
    }

    @Test func segmentFileNamesCarryTwentyDigits() {
        #expect(RecordFraming.segmentFileName(firstSequence: 1) == "00000000000000000001.log")
        #expect(RecordFraming.firstSequence(ofSegmentFileName: "00000000000000125001.log") == 125_001)
        #expect(RecordFraming.firstSequence(ofSegmentFileName: "0000000000000012500x.log") == nil)
        #expect(RecordFraming.firstSequence(ofSegmentFileName: "00000000000000000001.snap") == nil)
    }

    /// Two records after the segment header; the damage is done to the second.
    static func twoRecords() -> (bytes: [UInt8], second: Int) {
        var buffer = RecordFraming.makeSegmentHeader(firstSequence: 1)
        Array("first".utf8).withUnsafeBytes { RecordFraming.appendRecord(sequence: 1, encoding: TestRecordCodec.encoding, payload: $0, to: &buffer) }
        let second = buffer.count
        Array("second record".utf8).withUnsafeBytes {
            RecordFraming.appendRecord(sequence: 2, encoding: TestRecordCodec.encoding, payload: $0, to: &buffer)
        }
        return (buffer, second)
    }

    static func damage(_ bytes: [UInt8]) -> (count: Int, damage: RecordDamage?) {
        var reader = RecordReader(bytes: bytes, startingAt: RecordFraming.segmentHeaderLength, expectedSequence: 1)
        var count = 0
        while reader.next() != nil { count += 1 }
        return (count, reader.damage)
    }

    @Test func stopsAtTheFirstDamagedRecordAndSaysWhy() {
        let (bytes, second) = Self.twoRecords()
        var torn = Array(bytes.dropLast(3))
        #expect(
            Self.damage(torn).damage
                == RecordDamage(offset: second, bytesDiscarded: torn.count - second, reason: .truncatedPayload))
        torn = Array(bytes.prefix(second + 7))
        #expect(Self.damage(torn).damage == RecordDamage(offset: second, bytesDiscarded: 7, reason: .truncatedHeader))

        var flipped = bytes
        flipped[bytes.count - 2] ^= 1
        #expect(Self.damage(flipped).damage?.reason == .checksumMismatch)
        flipped = bytes
        flipped[second] = 0x44
        #expect(Self.damage(flipped).damage?.reason == .badMagic)
        flipped = bytes
        flipped[second + 7] = 0x7F
        #expect(Self.damage(flipped).damage?.reason == .lengthOutOfRange)

        let zeroed = Array(bytes.prefix(second)) + [UInt8](repeating: 0, count: 4096)
        let result = Self.damage(zeroed)
        #expect(result.count == 1)
        #expect(result.damage == RecordDamage(offset: second, bytesDiscarded: 4096, reason: .zeroFilled))
    }

    @Test func rejectsARecordOutOfSequence() {
        var buffer = RecordFraming.makeSegmentHeader(firstSequence: 1)
        Array("one".utf8).withUnsafeBytes { RecordFraming.appendRecord(sequence: 1, encoding: TestRecordCodec.encoding, payload: $0, to: &buffer) }
        Array("three".utf8).withUnsafeBytes { RecordFraming.appendRecord(sequence: 3, encoding: TestRecordCodec.encoding, payload: $0, to: &buffer) }
        let result = Self.damage(buffer)
        #expect(result.count == 1)
        #expect(result.damage?.reason == .sequenceMismatch)
    }
}
