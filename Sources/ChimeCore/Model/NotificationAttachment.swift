import Foundation

/// A file shown with a notification (`UNNotificationAttachment`): an image, a sound or a
/// movie the device fetches from `url`.
///
/// JSON shape: `{"identifier": "map", "url": "https://example.com/map.png", "type":
/// "image/png", "size": 120000}`; every key is required. `type` is a MIME type or an Apple
/// uniform type identifier (`public.png`) of a kind iOS shows (``Kind``), `size` the file's
/// length in bytes, which must fit the kind's limit (Apple's "Supported File Types and Maximum
/// Sizes": audio 5 MB, images 10 MB, movies 50 MB, counted in MiB here). Chime never fetches
/// the file: it checks what the reminder says of it at scheduling, and delivery channels pass
/// the URL on (APNs as `mutable-content` for a notification service extension, FCM as the
/// notification image).
public struct NotificationAttachment: Codable, Hashable, Sendable {
    /// The attachment's identifier, unique within the content (1 to 256 bytes of UTF-8).
    public var identifier: String
    /// Where the file is: an absolute `https` or `http` URL of at most 2,048 bytes.
    public var url: String
    /// The file's type: a MIME type (`image/png`) or a uniform type identifier (`public.png`).
    public var type: String
    /// The file's length, in bytes.
    public var size: Int

    /// Creates an attachment without checking it; see ``validate(field:)``.
    public init(identifier: String, url: String, type: String, size: Int) {
        self.identifier = identifier
        self.url = url
        self.type = type
        self.size = size
    }

    /// The kinds of file iOS shows in a notification, with their size limits.
    public enum Kind: String, Sendable, CaseIterable {
        /// A sound: AIFF, WAV, MP3 or MPEG-4 audio, at most 5 MiB.
        case audio
        /// A picture: JPEG, GIF or PNG, at most 10 MiB; FCM shows the first as `notification.image`.
        case image
        /// A video: MPEG, MPEG-2, MPEG-4 or AVI, at most 50 MiB.
        case movie

        /// The largest file of this kind, in bytes: audio 5 MiB, image 10 MiB, movie 50 MiB.
        public var maximumSize: Int {
            switch self {
            case .audio: 5 << 20
            case .image: 10 << 20
            case .movie: 50 << 20
            }
        }
    }

    /// The types accepted, by kind: Apple's list (AIFF, WAV, MP3, MPEG-4 audio; JPEG, GIF,
    /// PNG; MPEG, MPEG-2, MPEG-4, AVI) as MIME types and as uniform type identifiers,
    /// lowercased.
    static let kinds: [String: Kind] = [
        "audio/aiff": .audio, "audio/x-aiff": .audio, "public.aiff-audio": .audio,
        "audio/wav": .audio, "audio/x-wav": .audio, "audio/wave": .audio, "com.microsoft.waveform-audio": .audio,
        "audio/mpeg": .audio, "audio/mp3": .audio, "public.mp3": .audio,
        "audio/mp4": .audio, "audio/x-m4a": .audio, "public.mpeg-4-audio": .audio,
        "image/jpeg": .image, "public.jpeg": .image,
        "image/gif": .image, "com.compuserve.gif": .image,
        "image/png": .image, "public.png": .image,
        "video/mpeg": .movie, "public.mpeg": .movie,
        "video/mpeg2": .movie, "public.mpeg-2-video": .movie,
        "video/mp4": .movie, "public.mpeg-4": .movie,
        "video/x-msvideo": .movie, "video/avi": .movie, "public.avi": .movie,
    ]

    /// The kind of `type` (compared without case), or `nil` for a type iOS does not show.
    public var kind: Kind? { Self.kinds[type.lowercased()] }

    /// The most attachments one content may carry.
    public static let maximumCount = 10
    /// The longest identifier, in UTF-8 bytes.
    public static let maximumIdentifierLength = 256
    /// The longest URL, in UTF-8 bytes.
    public static let maximumURLLength = 2048

    /// Checks the attachment.
    /// - Parameter field: the JSON path that errors name (`content.attachments[0]`).
    /// - Throws: `ValidationError` `.invalidArgument` for an empty or over-long identifier, a
    ///   URL that is not an absolute `https`/`http` URL with a host (or is over 2,048 bytes), a
    ///   type iOS does not show, or a size below 1 byte or above its kind's limit.
    public func validate(field: String) throws(ValidationError) {
        if identifier.isEmpty || identifier.utf8.count > Self.maximumIdentifierLength {
            throw ValidationError(
                .invalidArgument, field: "\(field).identifier",
                "must be 1 to \(Self.maximumIdentifierLength) bytes of UTF-8, not \(identifier.utf8.count)")
        }
        guard url.utf8.count <= Self.maximumURLLength, let parsed = URL(string: url),
            let scheme = parsed.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let host = parsed.host, !host.isEmpty
        else {
            throw ValidationError(
                .invalidArgument, field: "\(field).url",
                "must be an absolute https or http URL with a host, at most \(Self.maximumURLLength) bytes")
        }
        guard let kind else {
            throw ValidationError(
                .invalidArgument, field: "\(field).type",
                "'\(type.prefix(64))' is not a type iOS shows in a notification (audio: AIFF, WAV, MP3, MPEG-4 audio; images: JPEG, GIF, PNG; movies: MPEG, MPEG-2, MPEG-4, AVI)")
        }
        guard size >= 1, size <= kind.maximumSize else {
            throw ValidationError(
                .invalidArgument, field: "\(field).size",
                "is \(size) bytes; a \(kind.rawValue) attachment must be 1 to \(kind.maximumSize) bytes")
        }
    }

    private enum CodingKeys: String, CodingKey, CaseIterable { case identifier, url, type, size }

    /// Decodes the JSON shape above.
    /// - Throws: `DecodingError` for a missing or wrongly typed key, a size that is not a whole
    ///   number, or an unknown key (an ``UnknownFieldError`` underneath).
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        identifier = try container.decode(String.self, forKey: .identifier)
        url = try container.decode(String.self, forKey: .url)
        type = try container.decode(String.self, forKey: .type)
        size = try container.decodeNumber(Int.self, forKey: .size, expected: "a whole number of bytes")
    }

    /// Writes the binary form: identifier, url and type as strings, then size as an integer.
    func writeBinary(to sink: inout some BinarySink) {
        sink.writeString(identifier)
        sink.writeString(url)
        sink.writeString(type)
        sink.writeInt(size)
    }

    /// Reads ``writeBinary(to:)``'s form.
    init(reading reader: inout ByteReader) throws(BinaryDecodingError) {
        identifier = try reader.readString()
        url = try reader.readString()
        type = try reader.readString()
        size = try reader.readInt()
    }

    /// Writes a list: its count, then each attachment (an empty list is written too, so it
    /// reads back as empty, not as none).
    static func writeBinary(_ list: [NotificationAttachment], to sink: inout some BinarySink) {
        sink.writeCount(list.count)
        for attachment in list { attachment.writeBinary(to: &sink) }
    }

    /// Reads a list ``writeBinary(_:to:)`` wrote; each attachment takes at least 4 bytes.
    static func readBinaryList(from reader: inout ByteReader) throws(BinaryDecodingError) -> [NotificationAttachment] {
        let count = try reader.readCount(minimumElementSize: 4)
        var list: [NotificationAttachment] = []
        // The count comes from the bytes: reserve no more than a valid list holds.
        list.reserveCapacity(min(count, maximumCount))
        for _ in 0..<count { list.append(try NotificationAttachment(reading: &reader)) }
        return list
    }
}
