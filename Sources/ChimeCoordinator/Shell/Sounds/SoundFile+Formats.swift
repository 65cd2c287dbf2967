import Foundation

/// RIFF WAVE: a `fmt ` chunk (format tag, channels, rate, byte rate, block align, bits;
/// WAVE_FORMAT_EXTENSIBLE carries the tag in its sub-format GUID), an optional `fact`
/// chunk (sample frames of compressed data) and the `data` chunk.
enum WAVHeaderReader {
    static func read(_ source: some ByteSource) throws(SoundFileError) -> SoundHeader {
        let chunks = try walkChunks(in: source, from: 12, sizeField: .littleEndian32, padsToEven: true)
        guard let formatChunk = chunks.first(where: { $0.id == "fmt " }), formatChunk.size >= 16 else {
            throw SoundFileError(.malformed, "the WAV file has no complete fmt chunk")
        }
        let format = try source.readExactly(
            at: formatChunk.bodyOffset, count: Int(min(formatChunk.size, 40)), what: "WAV fmt chunk")
        var tag = littleEndian16(format, 0)
        if tag == 0xFFFE {
            guard format.count >= 26 else {
                throw SoundFileError(.malformed, "the WAV extensible fmt chunk is cut short")
            }
            tag = littleEndian16(format, 24)
        }
        let channels = Int(littleEndian16(format, 2))
        let sampleRate = Double(littleEndian32(format, 4))
        let bytesPerSecond = UInt64(littleEndian32(format, 8))
        let blockAlign = UInt64(littleEndian16(format, 12))
        let encoding: SoundHeader.Encoding
        switch tag {
        case 0x0001: encoding = .linearPCM
        case 0x0011: encoding = .imaADPCM
        case 0x0007: encoding = .muLaw
        case 0x0006: encoding = .aLaw
        default:
            throw SoundFileError(
                .unsupportedEncoding,
                "WAV format tag 0x\(String(tag, radix: 16, uppercase: true)) is not supported; use linear PCM (1), IMA ADPCM (0x11), µ-law (7) or a-law (6)")
        }
        try checkedRate(sampleRate, channels: channels, format: "WAV")
        guard blockAlign > 0 else { throw SoundFileError(.malformed, "the WAV header gives a block size of 0") }
        guard let data = chunks.first(where: { $0.id == "data" }) else {
            throw SoundFileError(.malformed, "the WAV file has no data chunk")
        }
        let duration: Double
        if encoding == .imaADPCM {
            if let fact = chunks.first(where: { $0.id == "fact" }), fact.size >= 4 {
                let frames = try source.readExactly(at: fact.bodyOffset, count: 4, what: "WAV fact chunk")
                duration = Double(littleEndian32(frames, 0)) / sampleRate
            } else if format.count >= 20, littleEndian16(format, 16) >= 2, littleEndian16(format, 18) > 0 {
                let framesPerBlock = UInt64(littleEndian16(format, 18))
                duration = Double(data.size / blockAlign * framesPerBlock) / sampleRate
            } else {
                guard bytesPerSecond > 0 else {
                    throw SoundFileError(.malformed, "the WAV header gives neither frames per block nor bytes per second")
                }
                duration = Double(data.size) / Double(bytesPerSecond)
            }
        } else {
            duration = Double(data.size / blockAlign) / sampleRate
        }
        return SoundHeader(
            container: .wav, encoding: encoding, sampleRate: sampleRate, channels: channels, duration: duration)
    }
}

/// Core Audio Format: `caff` version 1, a `desc` chunk (an AudioStreamBasicDescription:
/// Float64 rate, format ID, flags, bytes per packet, frames per packet, channels, bits), an
/// optional `pakt` chunk (valid frame count) and a `data` chunk led by a 4-byte edit count.
enum CAFHeaderReader {
    static func read(_ source: some ByteSource) throws(SoundFileError) -> SoundHeader {
        let fileHeader = try source.readExactly(at: 0, count: 8, what: "CAF file header")
        guard bigEndian16(fileHeader, 4) == 1 else {
            throw SoundFileError(.unsupportedFormat, "CAF version \(bigEndian16(fileHeader, 4)) is not supported; only version 1 is")
        }
        let chunks = try walkChunks(in: source, from: 8, sizeField: .bigEndian64, padsToEven: false)
        guard let descriptionChunk = chunks.first(where: { $0.id == "desc" }), descriptionChunk.size >= 32 else {
            throw SoundFileError(.malformed, "the CAF file has no complete desc chunk")
        }
        let description = try source.readExactly(at: descriptionChunk.bodyOffset, count: 32, what: "CAF desc chunk")
        let sampleRate = Double(bitPattern: bigEndian64(description, 0))
        let formatID = fourCharacterCode(description, 8)
        let bytesPerPacket = UInt64(bigEndian32(description, 16))
        let framesPerPacket = UInt64(bigEndian32(description, 20))
        let channels = Int(bigEndian32(description, 24))
        let encoding: SoundHeader.Encoding
        switch formatID {
        case "lpcm": encoding = .linearPCM
        case "ima4": encoding = .imaADPCM
        case "ulaw": encoding = .muLaw
        case "alaw": encoding = .aLaw
        default:
            throw SoundFileError(
                .unsupportedEncoding, "CAF format '\(formatID)' is not supported; use lpcm, ima4, ulaw or alaw")
        }
        try checkedRate(sampleRate, channels: channels, format: "CAF")
        guard let data = chunks.first(where: { $0.id == "data" }), data.size >= 4 else {
            throw SoundFileError(.malformed, "the CAF file has no data chunk")
        }
        let frames: UInt64
        if let packetTable = chunks.first(where: { $0.id == "pakt" }), packetTable.size >= 24 {
            let table = try source.readExactly(at: packetTable.bodyOffset, count: 24, what: "CAF pakt chunk")
            frames = bigEndian64(table, 8)
        } else {
            guard bytesPerPacket > 0, framesPerPacket > 0 else {
                throw SoundFileError(.malformed, "the CAF file has variable-size packets but no pakt chunk")
            }
            frames = (data.size - 4) / bytesPerPacket * framesPerPacket
        }
        return SoundHeader(
            container: .caf, encoding: encoding, sampleRate: sampleRate, channels: channels,
            duration: Double(frames) / sampleRate)
    }
}

/// AIFF and AIFF-C: a `COMM` chunk (channels, sample frames, sample size, 80-bit extended
/// sample rate; AIFF-C adds the compression type). In AIFF-C `ima4` the frame field counts
/// 64-frame packets.
enum AIFFHeaderReader {
    static let ima4FramesPerPacket: UInt64 = 64

    static func read(_ source: some ByteSource, isCompressed: Bool) throws(SoundFileError) -> SoundHeader {
        let chunks = try walkChunks(in: source, from: 12, sizeField: .bigEndian32, padsToEven: true)
        let commonSize = isCompressed ? 22 : 18
        guard let commonChunk = chunks.first(where: { $0.id == "COMM" }), commonChunk.size >= commonSize else {
            throw SoundFileError(.malformed, "the AIFF file has no complete COMM chunk")
        }
        let common = try source.readExactly(at: commonChunk.bodyOffset, count: commonSize, what: "AIFF COMM chunk")
        let channels = Int(bigEndian16(common, 0))
        var frames = UInt64(bigEndian32(common, 2))
        let sampleRate = extended80(common, 8)
        var encoding = SoundHeader.Encoding.linearPCM
        if isCompressed {
            switch fourCharacterCode(common, 18) {
            case "NONE", "twos", "sowt": encoding = .linearPCM
            case "ima4":
                encoding = .imaADPCM
                frames *= Self.ima4FramesPerPacket
            case "ulaw", "ULAW": encoding = .muLaw
            case "alaw", "ALAW": encoding = .aLaw
            case let other:
                throw SoundFileError(
                    .unsupportedEncoding,
                    "AIFF-C compression '\(other)' is not supported; use NONE, sowt, ima4, ulaw or alaw")
            }
        }
        try checkedRate(sampleRate, channels: channels, format: "AIFF")
        return SoundHeader(
            container: isCompressed ? .aifc : .aiff, encoding: encoding, sampleRate: sampleRate,
            channels: channels, duration: Double(frames) / sampleRate)
    }
}
