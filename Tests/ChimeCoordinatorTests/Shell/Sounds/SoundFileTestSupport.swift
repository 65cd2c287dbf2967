import Foundation

/// Builds small synthetic sound-file headers in memory. Audio data is declared by size
/// only (never written) unless a test appends bytes itself.
enum SoundBytes {
    static func littleEndian16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    static func littleEndian32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
    static func bigEndian16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    static func bigEndian32(_ value: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8((value >> (8 * $0)) & 0xFF) } }
    static func bigEndian64(_ value: UInt64) -> [UInt8] { (0..<8).reversed().map { UInt8((value >> (8 * $0)) & 0xFF) } }
    static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// The 80-bit IEEE 754 extended form of a whole number (AIFF sample rates).
    static func extended80(_ value: UInt64) -> [UInt8] {
        let highestBit = 63 - value.leadingZeroBitCount
        return bigEndian16(UInt16(16_383 + highestBit)) + bigEndian64(value << (63 - highestBit))
    }

    /// A RIFF WAVE header: an optional odd-sized `LIST` chunk, `fmt `, optional `fact`, and
    /// a `data` chunk header declaring `dataSize` bytes.
    static func wav(
        format: UInt16, channels: UInt16, sampleRate: UInt32, blockAlign: UInt16, bitsPerSample: UInt16,
        dataSize: UInt32, formatExtra: [UInt8] = [], factFrames: UInt32? = nil, byteRate: UInt32? = nil,
        oddChunkFirst: Bool = false
    ) -> Data {
        var format = littleEndian16(format) + littleEndian16(channels) + littleEndian32(sampleRate)
            + littleEndian32(byteRate ?? sampleRate * UInt32(blockAlign)) + littleEndian16(blockAlign)
            + littleEndian16(bitsPerSample)
        format += formatExtra
        var chunks: [UInt8] = []
        if oddChunkFirst { chunks += ascii("LIST") + littleEndian32(3) + [1, 2, 3, 0] }
        chunks += ascii("fmt ") + littleEndian32(UInt32(format.count)) + format
        if let factFrames { chunks += ascii("fact") + littleEndian32(4) + littleEndian32(factFrames) }
        chunks += ascii("data") + littleEndian32(dataSize)
        return Data(ascii("RIFF") + littleEndian32(4 + UInt32(chunks.count) + dataSize) + ascii("WAVE") + chunks)
    }

    /// A CAF header: `desc`, an optional `pakt` with `validFrames`, and a `data` chunk header
    /// declaring `audioBytes` after the edit count (`nil` declares -1: to the end of the file).
    static func caf(
        formatID: String, sampleRate: Double, channels: UInt32, bytesPerPacket: UInt32, framesPerPacket: UInt32,
        bitsPerChannel: UInt32, audioBytes: UInt64?, validFrames: UInt64? = nil
    ) -> Data {
        var bytes = ascii("caff") + bigEndian16(1) + bigEndian16(0)
        bytes += ascii("desc") + bigEndian64(32) + bigEndian64(sampleRate.bitPattern) + ascii(formatID)
            + bigEndian32(0) + bigEndian32(bytesPerPacket) + bigEndian32(framesPerPacket) + bigEndian32(channels)
            + bigEndian32(bitsPerChannel)
        if let validFrames {
            bytes += ascii("pakt") + bigEndian64(24) + bigEndian64(0) + bigEndian64(validFrames) + bigEndian32(0)
                + bigEndian32(0)
        }
        let size = audioBytes.map { $0 + 4 } ?? UInt64.max
        bytes += ascii("data") + bigEndian64(size) + bigEndian32(0)
        return Data(bytes)
    }

    /// An AIFF (`compression` nil) or AIFF-C header with a `COMM` chunk and an `SSND` header.
    static func aiff(
        channels: UInt16, frames: UInt32, bitsPerSample: UInt16, sampleRate: UInt64, compression: String? = nil
    ) -> Data {
        var common = bigEndian16(channels) + bigEndian32(frames) + bigEndian16(bitsPerSample) + extended80(sampleRate)
        var chunks: [UInt8] = []
        if let compression {
            common += ascii(compression) + [0, 0]  // empty Pascal-string name, padded to even
            chunks += ascii("FVER") + bigEndian32(4) + bigEndian32(0xA280_5140)
        }
        chunks += ascii("COMM") + bigEndian32(UInt32(common.count)) + common
        chunks += ascii("SSND") + bigEndian32(8) + bigEndian32(0) + bigEndian32(0)
        return Data(
            ascii("FORM") + bigEndian32(4 + UInt32(chunks.count)) + ascii(compression == nil ? "AIFF" : "AIFC")
                + chunks)
    }
}
