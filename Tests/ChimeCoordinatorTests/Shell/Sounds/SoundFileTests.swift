import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

@Suite struct SoundFileTests {
    private func expectSoundError(
        _ code: SoundFileError.Code, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws -> Void
    ) -> SoundFileError? {
        do {
            try body()
            Issue.record("expected SoundFileError \(code)", sourceLocation: sourceLocation)
            return nil
        } catch {
            guard let error = error as? SoundFileError else {
                Issue.record("expected a SoundFileError, got \(error)", sourceLocation: sourceLocation)
                return nil
            }
            #expect(error.code == code, sourceLocation: sourceLocation)
            return error
        }
    }

    // MARK: WAV

    @Test(arguments: [
        (UInt16(1), SoundHeader.Encoding.linearPCM, UInt16(2), UInt16(16)), (7, .muLaw, 1, 8), (6, .aLaw, 1, 8),
    ])
    func wavCodecsAreAccepted(format: UInt16, encoding: SoundHeader.Encoding, blockAlign: UInt16, bits: UInt16) throws {
        let data = SoundBytes.wav(
            format: format, channels: 1, sampleRate: 8000, blockAlign: blockAlign, bitsPerSample: bits,
            dataSize: 8000 * UInt32(blockAlign) * 5)
        let header = try SoundFile.validate(data)
        #expect(header == SoundHeader(container: .wav, encoding: encoding, sampleRate: 8000, channels: 1, duration: 5))
    }

    @Test func wavIMAADPCMUsesTheFactChunk() throws {
        let data = SoundBytes.wav(
            format: 0x11, channels: 1, sampleRate: 22_050, blockAlign: 512, bitsPerSample: 4, dataSize: 40_000,
            formatExtra: SoundBytes.littleEndian16(2) + SoundBytes.littleEndian16(1017), factFrames: 22_050 * 3)
        #expect(try SoundFile.validate(data) == SoundHeader(container: .wav, encoding: .imaADPCM, sampleRate: 22_050, channels: 1, duration: 3))
    }

    @Test func wavIMAADPCMWithoutFactCountsBlocks() throws {
        // 80 blocks of 505 frames at 8,080 Hz: 40,400 frames, 5 s.
        let data = SoundBytes.wav(
            format: 0x11, channels: 1, sampleRate: 8080, blockAlign: 256, bitsPerSample: 4, dataSize: 80 * 256,
            formatExtra: SoundBytes.littleEndian16(2) + SoundBytes.littleEndian16(505))
        #expect(try SoundFile.validate(data).duration == 5)
    }

    @Test func wavIMAADPCMFallsBackToBytesPerSecond() throws {
        let data = SoundBytes.wav(
            format: 0x11, channels: 1, sampleRate: 8000, blockAlign: 256, bitsPerSample: 4, dataSize: 4055 * 4,
            byteRate: 4055)
        #expect(try SoundFile.validate(data).duration == 4)
    }

    @Test func wavExtensibleReadsTheSubFormat() throws {
        let extra = SoundBytes.littleEndian16(22) + SoundBytes.littleEndian16(16) + SoundBytes.littleEndian32(3)
            + SoundBytes.littleEndian16(1) + [0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71]
        let data = SoundBytes.wav(
            format: 0xFFFE, channels: 2, sampleRate: 48_000, blockAlign: 4, bitsPerSample: 16, dataSize: 48_000 * 4 * 2,
            formatExtra: extra, oddChunkFirst: true)
        #expect(try SoundFile.validate(data) == SoundHeader(container: .wav, encoding: .linearPCM, sampleRate: 48_000, channels: 2, duration: 2))
    }

    @Test func thirtySecondsIsAcceptedAndThirtyOneRejected() throws {
        func pcm(seconds: UInt32) -> Data {
            SoundBytes.wav(
                format: 1, channels: 2, sampleRate: 44_100, blockAlign: 4, bitsPerSample: 16,
                dataSize: 44_100 * 4 * seconds)
        }
        #expect(try SoundFile.validate(pcm(seconds: 30)).duration == 30)
        let error = expectSoundError(.tooLong) { _ = try SoundFile.validate(pcm(seconds: 31)) }
        #expect(error?.message == "the sound lasts 31s; notification sounds must last at most 30s")
        #expect(try SoundFile.readHeader(pcm(seconds: 31)).duration == 31)
    }

    @Test func wavFloatAndMP3AreUnsupported() {
        let float = expectSoundError(.unsupportedEncoding) {
            _ = try SoundFile.validate(
                SoundBytes.wav(format: 3, channels: 1, sampleRate: 8000, blockAlign: 4, bitsPerSample: 32, dataSize: 8))
        }
        #expect(
            float?.message
                == "WAV format tag 0x3 is not supported; use linear PCM (1), IMA ADPCM (0x11), µ-law (7) or a-law (6)")
        _ = expectSoundError(.unsupportedEncoding) {
            _ = try SoundFile.validate(
                SoundBytes.wav(format: 0x55, channels: 1, sampleRate: 8000, blockAlign: 1, bitsPerSample: 0, dataSize: 8))
        }
    }

    @Test func brokenWAVHeadersAreMalformed() {
        let full = SoundBytes.wav(format: 1, channels: 1, sampleRate: 8000, blockAlign: 2, bitsPerSample: 16, dataSize: 0)
        let noData = expectSoundError(.malformed) { _ = try SoundFile.validate(full.prefix(full.count - 8)) }
        #expect(noData?.message == "the WAV file has no data chunk")
        _ = expectSoundError(.malformed) { _ = try SoundFile.validate(full.prefix(30)) }
        _ = expectSoundError(.malformed) {
            _ = try SoundFile.validate(
                SoundBytes.wav(format: 1, channels: 1, sampleRate: 0, blockAlign: 2, bitsPerSample: 16, dataSize: 8))
        }
    }

    // MARK: CAF

    struct CAFCase: Sendable, CustomTestStringConvertible {
        var formatID: String
        var encoding: SoundHeader.Encoding
        var bytesPerPacket: UInt32
        var framesPerPacket: UInt32
        var channels: UInt32
        var sampleRate: Double
        var audioBytes: UInt64
        var duration: Double
        var testDescription: String { formatID }
    }

    static let cafCases: [CAFCase] = [
        CAFCase(
            formatID: "lpcm", encoding: .linearPCM, bytesPerPacket: 4, framesPerPacket: 1, channels: 2,
            sampleRate: 48_000, audioBytes: 48_000 * 4 * 12, duration: 12),
        CAFCase(
            formatID: "ima4", encoding: .imaADPCM, bytesPerPacket: 34, framesPerPacket: 64, channels: 1,
            sampleRate: 32_000, audioBytes: 34 * 1000, duration: 2),
        CAFCase(
            formatID: "ulaw", encoding: .muLaw, bytesPerPacket: 1, framesPerPacket: 1, channels: 1, sampleRate: 8000,
            audioBytes: 8000 * 7, duration: 7),
        CAFCase(
            formatID: "alaw", encoding: .aLaw, bytesPerPacket: 1, framesPerPacket: 1, channels: 1, sampleRate: 8000,
            audioBytes: 8000 * 30, duration: 30),
    ]

    @Test(arguments: cafCases)
    func cafCodecsAreAccepted(_ example: CAFCase) throws {
        let data = SoundBytes.caf(
            formatID: example.formatID, sampleRate: example.sampleRate, channels: example.channels,
            bytesPerPacket: example.bytesPerPacket, framesPerPacket: example.framesPerPacket, bitsPerChannel: 16,
            audioBytes: example.audioBytes)
        let expected = SoundHeader(
            container: .caf, encoding: example.encoding, sampleRate: example.sampleRate,
            channels: Int(example.channels), duration: example.duration)
        #expect(try SoundFile.validate(data) == expected)
    }

    @Test func cafPacketTableGivesTheValidFrames() throws {
        let data = SoundBytes.caf(
            formatID: "ima4", sampleRate: 32_000, channels: 1, bytesPerPacket: 34, framesPerPacket: 64,
            bitsPerChannel: 0, audioBytes: 34 * 1000, validFrames: 63_000)
        #expect(try SoundFile.validate(data).duration == 1.96875)
    }

    @Test func cafDataToTheEndOfTheFileIsMeasured() throws {
        let header = SoundBytes.caf(
            formatID: "ulaw", sampleRate: 8000, channels: 1, bytesPerPacket: 1, framesPerPacket: 1, bitsPerChannel: 8,
            audioBytes: nil)
        #expect(try SoundFile.validate(header + Data(count: 800)).duration == 0.1)
    }

    @Test func cafRejectsLongAACAndVariablePackets() {
        _ = expectSoundError(.tooLong) {
            _ = try SoundFile.validate(
                SoundBytes.caf(
                    formatID: "lpcm", sampleRate: 44_100, channels: 1, bytesPerPacket: 2, framesPerPacket: 1,
                    bitsPerChannel: 16, audioBytes: 44_100 * 2 * 31))
        }
        let aac = expectSoundError(.unsupportedEncoding) {
            _ = try SoundFile.validate(
                SoundBytes.caf(
                    formatID: "aac ", sampleRate: 44_100, channels: 2, bytesPerPacket: 0, framesPerPacket: 1024,
                    bitsPerChannel: 0, audioBytes: 1000))
        }
        #expect(aac?.message == "CAF format 'aac ' is not supported; use lpcm, ima4, ulaw or alaw")
        _ = expectSoundError(.malformed) {
            _ = try SoundFile.validate(
                SoundBytes.caf(
                    formatID: "lpcm", sampleRate: 44_100, channels: 1, bytesPerPacket: 0, framesPerPacket: 1,
                    bitsPerChannel: 16, audioBytes: 1000))
        }
    }

    // MARK: AIFF

    @Test func extendedSampleRatesDecode() {
        #expect(SoundBytes.extended80(44_100) == [0x40, 0x0E, 0xAC, 0x44, 0, 0, 0, 0, 0, 0])
        #expect(extended80([0x40, 0x0E, 0xAC, 0x44, 0, 0, 0, 0, 0, 0], 0) == 44_100)
        #expect(extended80([0x40, 0x0D, 0xAC, 0x44, 0, 0, 0, 0, 0, 0], 0) == 22_050)
        #expect(extended80([0x3F, 0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0], 0) == 0.5)
        #expect(extended80([0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 0) == 0)
    }

    @Test func plainAIFFIsLinearPCM() throws {
        let data = SoundBytes.aiff(channels: 2, frames: 44_100 * 20, bitsPerSample: 16, sampleRate: 44_100)
        #expect(try SoundFile.validate(data) == SoundHeader(container: .aiff, encoding: .linearPCM, sampleRate: 44_100, channels: 2, duration: 20))
    }

    @Test(arguments: [
        ("NONE", SoundHeader.Encoding.linearPCM, UInt32(8000 * 4), 4.0), ("sowt", .linearPCM, 8000 * 6, 6),
        ("ima4", .imaADPCM, 250, 2), ("ulaw", .muLaw, 8000 * 3, 3), ("ALAW", .aLaw, 8000, 1),
    ])
    func aiffCCodecsAreAccepted(compression: String, encoding: SoundHeader.Encoding, frames: UInt32, duration: Double) throws {
        let data = SoundBytes.aiff(channels: 1, frames: frames, bitsPerSample: 16, sampleRate: 8000, compression: compression)
        #expect(try SoundFile.validate(data) == SoundHeader(container: .aifc, encoding: encoding, sampleRate: 8000, channels: 1, duration: duration))
    }

    @Test func aiffRejectsLongAndFloat() {
        _ = expectSoundError(.tooLong) {
            _ = try SoundFile.validate(SoundBytes.aiff(channels: 1, frames: 8000 * 31, bitsPerSample: 16, sampleRate: 8000))
        }
        let float = expectSoundError(.unsupportedEncoding) {
            _ = try SoundFile.validate(
                SoundBytes.aiff(channels: 1, frames: 8, bitsPerSample: 32, sampleRate: 8000, compression: "fl32"))
        }
        #expect(float?.message == "AIFF-C compression 'fl32' is not supported; use NONE, sowt, ima4, ulaw or alaw")
    }

    // MARK: Files and names

    @Test func otherFormatsAreUnsupported() {
        let ogg = expectSoundError(.unsupportedFormat) { _ = try SoundFile.validate(Data("OggS\0\u{2}\0\0\0\0\0\0\0\0".utf8)) }
        #expect(ogg?.message == "the file is not WAV, CAF or AIFF (it starts with 'OggS')")
        _ = expectSoundError(.unsupportedFormat) { _ = try SoundFile.validate(Data("RIFF".utf8)) }
        _ = expectSoundError(.unsupportedFormat) { _ = try SoundFile.validate(Data()) }
    }

    @Test func filesAreReadFromTheirHeaders() throws {
        let directory = try TemporaryDirectory(prefix: "sounds")
        let url = try SoundFile.url(forSoundNamed: "bell.aiff", in: directory.url)
        try SoundBytes.aiff(channels: 1, frames: 8000 * 2, bitsPerSample: 16, sampleRate: 8000).write(to: url)
        #expect(try SoundFile.validate(fileAt: url).duration == 2)
        let long = try SoundFile.url(forSoundNamed: "long.wav", in: directory.url)
        try SoundBytes.wav(
            format: 1, channels: 1, sampleRate: 8000, blockAlign: 2, bitsPerSample: 16, dataSize: 8000 * 2 * 60
        ).write(to: long)
        let tooLong = expectSoundError(.tooLong) { _ = try SoundFile.validate(fileAt: long) }
        #expect(tooLong?.message == "long.wav lasts 1m; notification sounds must last at most 30s")
        let missing = expectSoundError(.unreadable) {
            _ = try SoundFile.validate(fileAt: directory.url.appendingPathComponent("missing.caf"))
        }
        #expect(missing?.message.hasPrefix("cannot open sound file missing.caf") == true)
        let folder = expectSoundError(.unreadable) { _ = try SoundFile.validate(fileAt: directory.url) }
        #expect(folder?.message.hasSuffix("is a directory") == true)
    }

    @Test(arguments: ["", ".", "..", "../etc/passwd", "a/b.caf", ".hidden.caf", "a\\b.caf", "bell\u{0}.caf", String(repeating: "x", count: 256)])
    func soundNamesMustBePlainFileNames(name: String) {
        _ = expectSoundError(.invalidName) { _ = try SoundFile.url(forSoundNamed: name, in: URL(fileURLWithPath: "/sounds")) }
    }

    @Test func plainSoundNamesResolveInsideTheDirectory() throws {
        let url = try SoundFile.url(forSoundNamed: "chime 2.caf", in: URL(fileURLWithPath: "/srv/sounds"))
        #expect(url.path == "/srv/sounds/chime 2.caf")
    }
}

/// The shell's check of a `schedule` request's named sounds against the sounds directory.
@Suite struct SoundLibraryTests {
    @Test func eachNamedSoundIsCheckedOnceAndDefaultNever() throws {
        let directory = try TemporaryDirectory(prefix: "sounds")
        let fiveSeconds = SoundBytes.wav(format: 1, channels: 1, sampleRate: 8000, blockAlign: 2, bitsPerSample: 16, dataSize: 8000 * 2 * 5)
        try fiveSeconds.write(to: directory.url.appendingPathComponent("chime.wav"))
        let library = try #require(SoundLibrary(directory: directory.url.path))
        func reminder(_ id: ReminderID, sound: String?) -> Reminder {
            Reminder(id: id, recipient: "alice", content: Content(body: "x", sound: sound), trigger: Trigger(start: .instant(Date())))
        }
        let request = ControlRequest(command: .schedule([
            reminder("a", sound: "chime.wav"), reminder("b", sound: "missing.wav"), reminder("c", sound: "missing.wav"),
            reminder("d", sound: "default"), reminder("e", sound: nil),
        ]))
        #expect(Array(library.problems(in: request).keys) == ["missing.wav"])
        #expect(library.problems(in: ControlRequest(command: .status)).isEmpty)
    }
}
