import Foundation

/// A string-backed identifier that encodes as a bare JSON string.
public protocol StringIdentifier: RawRepresentable, Hashable, Comparable, Codable, Sendable,
    CustomStringConvertible, ExpressibleByStringLiteral where RawValue == String
{
    init(rawValue: String)
}

extension StringIdentifier {
    public init(_ rawValue: String) { self.init(rawValue: rawValue) }
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    public var description: String { rawValue }

    /// FNV-1a (64-bit) of the first 16 UTF-8 bytes (those not among the last 16), the last
    /// 16 bytes and the length, folded: a cheap, unseeded spread (at most 32 bytes read) to
    /// pick a stripe of a `StripedDictionary`. Both ends count, so ids that differ only at the
    /// front (`<n>@calendar.example.com`) spread as well as ids that differ at the end
    /// (counters, random suffixes); an id of at most 16 bytes hashes as before (whole, then
    /// the length). Not for a hash table's buckets: ids chosen to collide only make stripes
    /// uneven (and a snapshot's copy-on-write copy bigger), never a lookup slower.
    @inlinable
    public var stripeHash: UInt {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let utf8 = rawValue.utf8
        let count = utf8.count
        let headCount = Swift.max(0, Swift.min(16, count - 16))
        let mixed = utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes.prefix(headCount) { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            for byte in bytes.suffix(16) { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            return true
        }
        if mixed == nil {
            for byte in utf8.prefix(headCount) { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            for byte in utf8.suffix(16) { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        }
        hash = (hash ^ UInt64(truncatingIfNeeded: count)) &* 0x0000_0100_0000_01b3
        return UInt(truncatingIfNeeded: hash ^ (hash >> 29))
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// Identifies a reminder; client-chosen or generated. Scheduling an existing id replaces it.
public struct ReminderID: StringIdentifier {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// Identifies who a reminder is for (a user, a device, an app install): the topic suffix
/// of its fire events (`fire.<recipient>`).
public struct RecipientID: StringIdentifier {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// Identifies a worker process (`host-pid` unless configured).
public struct WorkerID: StringIdentifier {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
}

extension ReminderID {
    /// The maximum length of a reminder id in UTF-8 bytes.
    public static let maximumLength = 256

    /// Checks that the id is non-empty, at most `maximumLength` bytes, free of control
    /// characters and in Unicode Normalization Form C (Swift compares strings by canonical
    /// equivalence but slots and stripes hash their UTF-8 bytes, so an NFD twin of an NFC id
    /// would be one key in a dictionary and two on the wire).
    /// - Throws: `ValidationError` with code `.invalidArgument`.
    public func validate() throws(ValidationError) {
        try validateIdentifier(rawValue, field: "id", maximumLength: Self.maximumLength)
    }
}

extension RecipientID {
    /// Checks that the recipient is non-empty, at most 256 bytes, in Unicode Normalization
    /// Form C (its slot is a hash of its UTF-8 bytes; see ``ReminderID/validate()``), and has
    /// no control characters or spaces (it becomes part of a ZeroMQ topic).
    /// - Throws: `ValidationError` with code `.invalidArgument`.
    public func validate() throws(ValidationError) {
        try validateIdentifier(rawValue, field: "recipient", maximumLength: 256)
        if rawValue.utf8.contains(UInt8(ascii: " ")) {
            throw ValidationError(.invalidArgument, field: "recipient", "must not contain spaces")
        }
    }
}

func validateIdentifier(_ value: String, field: String, maximumLength: Int) throws(ValidationError) {
    if value.isEmpty {
        throw ValidationError(.invalidArgument, field: field, "must not be empty")
    }
    if value.utf8.count > maximumLength {
        throw ValidationError(.invalidArgument, field: field, "is longer than \(maximumLength) bytes")
    }
    // Plain ASCII (the usual id) is checked byte by byte; the general-category lookup per
    // scalar was a tenth of bulk ingest.
    let isASCII = value.utf8.allSatisfy { $0 < 0x80 }
    let hasControl =
        isASCII
        ? value.utf8.contains { $0 < 0x20 || $0 == 0x7F }
        : value.unicodeScalars.contains { $0.properties.generalCategory == .control }
    if hasControl {
        throw ValidationError(.invalidArgument, field: field, "must not contain control characters")
    }
    if !isASCII && !value.utf8.elementsEqual(value.precomposedStringWithCanonicalMapping.utf8) {
        throw ValidationError(
            .invalidArgument, field: field,
            "must be in Unicode Normalization Form C (NFC): the same text in another form would be another key")
    }
}
