import ChimeCore
import Foundation

/// A notification sound that Chime refuses, with a stable code.
///
/// Equality compares the code only. The reminder is then scheduled with the `default`
/// sound and the reply carries ``description`` as a warning.
public struct SoundFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable, machine-readable reason. New codes may be added at any time.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's text, such as `too_long`.
        public var rawValue: String
        /// Creates a code from its text.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's text.
        public var description: String { rawValue }

        /// The sound name could escape the sounds directory or is not a file name.
        public static let invalidName = Code(rawValue: "invalid_name")
        /// The file is missing or cannot be read.
        public static let unreadable = Code(rawValue: "unreadable")
        /// The file is not WAV, CAF or AIFF/AIFF-C.
        public static let unsupportedFormat = Code(rawValue: "unsupported_format")
        /// The container is fine but the audio is not linear PCM, IMA4, µ-law or a-law.
        public static let unsupportedEncoding = Code(rawValue: "unsupported_encoding")
        /// A header is truncated or contradicts itself.
        public static let malformed = Code(rawValue: "malformed")
        /// The sound lasts longer than notifications allow (30 s).
        public static let tooLong = Code(rawValue: "too_long")
    }

    /// The stable reason.
    public var code: Code
    /// One human sentence saying what is wrong.
    public var message: String

    /// Creates an error with its code and human sentence.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The human sentence.
    public var description: String { message }

    /// Compares the codes only.
    public static func == (lhs: SoundFileError, rhs: SoundFileError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

/// What a sound file's header says.
public struct SoundHeader: Hashable, Sendable {
    /// The file format.
    public enum Container: String, Hashable, Sendable {
        /// RIFF WAVE.
        case wav
        /// Apple Core Audio Format.
        case caf
        /// AIFF (uncompressed, big-endian samples).
        case aiff
        /// AIFF-C (with a compression type).
        case aifc
    }

    /// The audio data format.
    public enum Encoding: String, Hashable, Sendable {
        /// Uncompressed samples (WAV format 1, CAF `lpcm`, AIFF, AIFF-C `NONE`/`twos`/`sowt`).
        case linearPCM
        /// IMA ADPCM (WAV format 0x11, CAF and AIFF-C `ima4`).
        case imaADPCM
        /// G.711 µ-law (WAV format 7, `ulaw`).
        case muLaw
        /// G.711 a-law (WAV format 6, `alaw`).
        case aLaw
    }

    /// The file format.
    public var container: Container
    /// The audio data format.
    public var encoding: Encoding
    /// Frames per second (Hz).
    public var sampleRate: Double
    /// Channels per frame.
    public var channels: Int
    /// The playing time in seconds: frames / sample rate, or data bytes / bytes per second
    /// when the header gives no frame count.
    public var duration: Double

    /// Creates a header description.
    public init(container: Container, encoding: Encoding, sampleRate: Double, channels: Int, duration: Double) {
        self.container = container
        self.encoding = encoding
        self.sampleRate = sampleRate
        self.channels = channels
        self.duration = duration
    }
}

/// Notification sound files: WAV, CAF or AIFF/AIFF-C holding linear PCM, IMA4, µ-law or
/// a-law audio and lasting at most 30 s, as `UNNotificationSound` requires.
///
/// Only headers are read: the chunk walk seeks past audio data, so a long file is rejected
/// without loading it. Formats: RIFF WAVE (Microsoft/IBM, 1991; `fmt `, `fact`, `data`),
/// Apple Core Audio Format (`caff`, `desc`, `pakt`, `data`), and Apple AIFF 1.3 / AIFF-C
/// (`FORM`, `COMM` with an 80-bit IEEE 754 extended sample rate).
public enum SoundFile {
    /// The longest notification sound, in seconds.
    public static let maximumDuration: Double = 30

    /// The file for sound `name` inside `directory`, refusing names that are not a plain
    /// file name (`chime.caf`): empty, `.`/`..` or starting with a dot, containing `/`, `\`
    /// or control characters, or longer than 255 bytes. Does not touch the file system.
    /// - Throws: `SoundFileError` `.invalidName`.
    public static func url(forSoundNamed name: String, in directory: URL) throws(SoundFileError) -> URL {
        let isPlainFileName =
            !name.isEmpty && name.utf8.count <= 255 && !name.hasPrefix(".")
            && !name.contains("/") && !name.contains("\\")
            && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
        guard isPlainFileName else {
            throw SoundFileError(.invalidName, "sound '\(name)' is not a plain file name such as chime.caf")
        }
        return directory.appendingPathComponent(name, isDirectory: false)
    }

    /// Reads and checks the sound in `data` (a whole file, or at least its headers).
    /// - Returns: the header, once it is a supported format lasting at most ``maximumDuration``.
    /// - Throws: `SoundFileError` (`.unsupportedFormat`, `.unsupportedEncoding`,
    ///   `.malformed`, `.tooLong`).
    public static func validate(_ data: Data) throws(SoundFileError) -> SoundHeader {
        try checked(try readHeader(DataByteSource(data)), name: "the sound")
    }

    /// Reads and checks the sound file at `url`, reading only its headers.
    /// - Returns: the header, once it is a supported format lasting at most ``maximumDuration``.
    /// - Throws: `SoundFileError` `.unreadable` when the file cannot be opened or read, and
    ///   the errors of ``validate(_:)``.
    public static func validate(fileAt url: URL) throws(SoundFileError) -> SoundHeader {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw SoundFileError(.unreadable, "sound file \(url.lastPathComponent) is a directory")
        }
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw SoundFileError(.unreadable, "cannot open sound file \(url.lastPathComponent): \(error.localizedDescription)")
        }
        // A read-only handle has nothing to flush, so a failing close loses nothing.
        defer { try? handle.close() }
        let source = try FileByteSource(handle: handle, name: url.lastPathComponent)
        return try checked(try readHeader(source), name: url.lastPathComponent)
    }

    /// Reads the header in `data` without the duration limit.
    /// - Throws: `SoundFileError` (`.unsupportedFormat`, `.unsupportedEncoding`, `.malformed`).
    public static func readHeader(_ data: Data) throws(SoundFileError) -> SoundHeader {
        try readHeader(DataByteSource(data))
    }

    static func readHeader(_ source: some ByteSource) throws(SoundFileError) -> SoundHeader {
        let magic = try source.read(at: 0, count: 12)
        guard magic.count >= 12 else {
            throw SoundFileError(.unsupportedFormat, "the file is too short to be WAV, CAF or AIFF")
        }
        switch (fourCharacterCode(magic, 0), fourCharacterCode(magic, 8)) {
        case ("RIFF", "WAVE"): return try WAVHeaderReader.read(source)
        case ("FORM", "AIFF"): return try AIFFHeaderReader.read(source, isCompressed: false)
        case ("FORM", "AIFC"): return try AIFFHeaderReader.read(source, isCompressed: true)
        case ("caff", _): return try CAFHeaderReader.read(source)
        default:
            throw SoundFileError(.unsupportedFormat, "the file is not WAV, CAF or AIFF (it starts with '\(fourCharacterCode(magic, 0))')")
        }
    }

    private static func checked(_ header: SoundHeader, name: String) throws(SoundFileError) -> SoundHeader {
        guard header.duration <= maximumDuration else {
            throw SoundFileError(
                .tooLong,
                "\(name) lasts \(DurationParser.format(seconds: header.duration)); notification sounds must last at most 30s")
        }
        return header
    }
}
