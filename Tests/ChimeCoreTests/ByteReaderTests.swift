import Foundation
import Testing

@testable import ChimeCore

/// The one binary reader and writer: both length prefixes round-trip, and every string
/// read, whatever its prefix, refuses bytes that are not UTF-8.
@Suite struct ByteReaderTests {
    @Test func bothLengthPrefixesRoundTrip() throws {
        var writer = ByteWriter(capacity: 0)
        writer.writeString("ünï", .varint)
        writer.writeString("✓", .fixed32)
        writer.writeFixed32(0xDEAD_BEEF)
        writer.writeBytes(Data([1, 2, 3]), .fixed32)
        #expect(writer.bytes == [5] + Array("ünï".utf8) + [3, 0, 0, 0] + Array("✓".utf8) + [0xEF, 0xBE, 0xAD, 0xDE, 3, 0, 0, 0, 1, 2, 3])
        var counter = ByteCounter()
        counter.writeString("✓", .fixed32)
        counter.writeFixed32(1)
        #expect(counter.count == 11)

        var reader = ByteReader(writer.bytes[...])
        #expect(try reader.readString() == "ünï")
        #expect(try reader.readString(.fixed32) == "✓")
        #expect(try reader.readFixed32() == 0xDEAD_BEEF)
        #expect(try Array(reader.readBytes(.fixed32)) == [1, 2, 3])
        #expect(reader.isAtEnd)
    }

    /// Overlong forms, lone continuation bytes, surrogates and truncated sequences.
    static let invalidUTF8: [[UInt8]] = [[0xFF], [0xC0, 0xAF], [0x80], [0xED, 0xA0, 0x80], [0xE2, 0x9C], [0x61, 0xF8, 0x88, 0x80, 0x80, 0x80]]

    @Test(arguments: invalidUTF8)
    func aVarintPrefixedStringThatIsNotUTF8IsRefused(bytes: [UInt8]) {
        var reader = ByteReader(([UInt8(bytes.count)] + bytes)[...])
        let error = #expect(throws: BinaryDecodingError.self) { try reader.readString() }
        #expect(error?.reason == .invalidUTF8)
        #expect(error?.offset == 1)
    }

    @Test(arguments: invalidUTF8)
    func aFixed32PrefixedStringThatIsNotUTF8IsRefused(bytes: [UInt8]) {
        var reader = ByteReader(([UInt8(bytes.count), 0, 0, 0] + bytes)[...])
        let error = #expect(throws: BinaryDecodingError.self) { try reader.readString(.fixed32) }
        #expect(error?.reason == .invalidUTF8)
        #expect(error?.offset == 4)
    }

    @Test func aCountLargerThanTheBytesThatRemainIsRefused() throws {
        var reader = ByteReader([3, 0, 0, 0, 1, 2, 3, 4, 5, 6][...])
        #expect(throws: BinaryDecodingError(.lengthPastEnd, offset: 0)) {
            try reader.readCount(.fixed32, minimumElementSize: 3)
        }
        var fits = ByteReader([2, 0, 0, 0, 1, 2, 3, 4, 5, 6][...])
        #expect(try fits.readCount(.fixed32, minimumElementSize: 3) == 2)
        var short = ByteReader([1, 0, 0][...])
        #expect(throws: BinaryDecodingError(.truncated, offset: 0)) { try short.readFixed32() }
        var past = ByteReader([5, 0, 0, 0, 0x61][...])
        let error = #expect(throws: BinaryDecodingError.self) { try past.readString(.fixed32) }
        #expect(error?.reason == .lengthPastEnd)
        #expect(error?.offset == 0)
    }
}
