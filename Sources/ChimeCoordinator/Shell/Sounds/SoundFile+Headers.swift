import Foundation

/// Random access to the bytes of a sound file: an in-memory `Data` or an open file.
protocol ByteSource {
    /// The total length in bytes.
    var length: UInt64 { get }
    /// Up to `count` bytes from `offset`; fewer at the end, none past it.
    func read(at offset: UInt64, count: Int) throws(SoundFileError) -> [UInt8]
}

struct DataByteSource: ByteSource {
    let data: Data
    init(_ data: Data) { self.data = data }

    var length: UInt64 { UInt64(data.count) }

    func read(at offset: UInt64, count: Int) -> [UInt8] {
        guard offset < length else { return [] }
        let start = data.startIndex + Int(offset)
        return Array(data[start..<min(start + count, data.endIndex)])
    }
}

struct FileByteSource: ByteSource {
    let handle: FileHandle
    let name: String
    let length: UInt64

    init(handle: FileHandle, name: String) throws(SoundFileError) {
        self.handle = handle
        self.name = name
        do {
            length = try handle.seekToEnd()
        } catch {
            throw SoundFileError(.unreadable, "cannot read sound file \(name): \(error.localizedDescription)")
        }
    }

    func read(at offset: UInt64, count: Int) throws(SoundFileError) -> [UInt8] {
        guard offset < length else { return [] }
        do {
            try handle.seek(toOffset: offset)
            return Array(try handle.read(upToCount: count) ?? Data())
        } catch {
            throw SoundFileError(.unreadable, "cannot read sound file \(name): \(error.localizedDescription)")
        }
    }
}

extension ByteSource {
    /// Exactly `count` bytes from `offset`.
    /// - Throws: `SoundFileError` `.malformed` naming `what` when the file ends first.
    func readExactly(at offset: UInt64, count: Int, what: String) throws(SoundFileError) -> [UInt8] {
        let bytes = try read(at: offset, count: count)
        guard bytes.count == count else {
            throw SoundFileError(.malformed, "the \(what) is cut short")
        }
        return bytes
    }
}

/// One chunk of a RIFF, IFF or CAF file: its id and where its body lies.
struct Chunk {
    var id: String
    var bodyOffset: UInt64
    /// The body's declared size in bytes; an "unknown" size (all ones) is the rest of the file.
    var size: UInt64
}

enum ChunkSizeField {
    case littleEndian32, bigEndian32, bigEndian64
}

/// The chunk headers from `start` to the end of `source`, seeking past each body.
///
/// A declared size may run past the end of the file (a header-only copy); the walk then
/// stops there. RIFF and IFF bodies are padded to an even length; CAF bodies are not.
/// - Throws: `SoundFileError` `.malformed` past 1,000 chunks or for a negative CAF size.
func walkChunks(
    in source: some ByteSource, from start: UInt64, sizeField: ChunkSizeField, padsToEven: Bool
) throws(SoundFileError) -> [Chunk] {
    let headerSize: UInt64 = sizeField == .bigEndian64 ? 12 : 8
    var chunks: [Chunk] = []
    var offset = start
    while offset <= source.length, source.length - offset >= headerSize {
        guard chunks.count < 1000 else {
            throw SoundFileError(.malformed, "the file has more than 1000 chunks")
        }
        let header = try source.readExactly(at: offset, count: Int(headerSize), what: "chunk header")
        let bodyOffset = offset + headerSize
        let remaining = source.length - bodyOffset
        var size: UInt64
        switch sizeField {
        case .littleEndian32:
            size = UInt64(littleEndian32(header, 4))
            if size == UInt64(UInt32.max) { size = remaining }
        case .bigEndian32:
            size = UInt64(bigEndian32(header, 4))
            if size == UInt64(UInt32.max) { size = remaining }
        case .bigEndian64:
            let signed = Int64(bitPattern: bigEndian64(header, 4))
            guard signed >= -1 else { throw SoundFileError(.malformed, "a chunk has a negative size") }
            size = signed == -1 ? remaining : UInt64(signed)
        }
        chunks.append(Chunk(id: fourCharacterCode(header, 0), bodyOffset: bodyOffset, size: size))
        let padding: UInt64 = padsToEven ? size & 1 : 0
        let (next, overflow) = bodyOffset.addingReportingOverflow(size + padding)
        guard !overflow else { break }
        offset = next
    }
    return chunks
}

func fourCharacterCode(_ bytes: [UInt8], _ offset: Int) -> String {
    String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
}

func littleEndian16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
    UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
}

func littleEndian32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
    (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
}

func bigEndian16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
    UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
}

func bigEndian32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
    (0..<4).reduce(0) { $0 << 8 | UInt32(bytes[offset + $1]) }
}

func bigEndian64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
    (0..<8).reduce(0) { $0 << 8 | UInt64(bytes[offset + $1]) }
}

/// The value of an 80-bit IEEE 754 extended number (AIFF's sample rate): 1 sign bit, a
/// 15-bit exponent biased by 16,383, and a 64-bit significand with an explicit integer bit.
func extended80(_ bytes: [UInt8], _ offset: Int) -> Double {
    let sign: FloatingPointSign = bytes[offset] & 0x80 == 0 ? .plus : .minus
    let exponent = Int(bigEndian16(bytes, offset) & 0x7FFF)
    let significand = bigEndian64(bytes, offset + 2)
    if exponent == 0 && significand == 0 { return 0 }
    if exponent == 0x7FFF { return .nan }
    return Double(sign: sign, exponent: exponent - 16_383 - 63, significand: Double(significand))
}

/// Checks what every format needs: a positive, finite sample rate and at least one channel.
func checkedRate(_ sampleRate: Double, channels: Int, format: String) throws(SoundFileError) {
    guard sampleRate.isFinite, sampleRate > 0 else {
        throw SoundFileError(.malformed, "the \(format) header gives no valid sample rate")
    }
    guard channels > 0 else {
        throw SoundFileError(.malformed, "the \(format) header gives no channels")
    }
}
