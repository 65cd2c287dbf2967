/// Bytes that ``ByteReader`` refuses: truncated, malformed, not valid UTF-8, or of a
/// format version the reader does not know. The one error of every binary form Chime
/// reads: reminders (`Reminder(binary:)`), snapshots, compact journal records and the
/// dispatch and acknowledgement frames.
///
/// Equality compares the reason only, so new context never breaks callers that match on
/// `error.reason`; read ``offset`` for where the bad item starts.
public struct BinaryDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable, machine-readable reason. New reasons may be added at any time.
    public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The first byte is not a format version this build reads (reminders: only 1 is).
        public static let unknownVersion = Reason(rawValue: "unknown_version")
        /// The bytes end inside an item.
        public static let truncated = Reason(rawValue: "truncated")
        /// A varint runs past ten bytes or past 64 bits.
        public static let varintOverflow = Reason(rawValue: "varint_overflow")
        /// A number does not fit the field it is read into.
        public static let integerOutOfRange = Reason(rawValue: "integer_out_of_range")
        /// An instant lies outside ``RFC3339/supportedInstants`` (NaN included).
        public static let instantOutOfRange = Reason(rawValue: "instant_out_of_range")
        /// A string length or element count exceeds the bytes that remain.
        public static let lengthPastEnd = Reason(rawValue: "length_past_end")
        /// A string is not valid UTF-8.
        public static let invalidUTF8 = Reason(rawValue: "invalid_utf8")
        /// A field's value is not valid for its type (an embedded JSON document that does
        /// not decode).
        public static let invalidValue = Reason(rawValue: "invalid_value")
        /// A tag byte names no case of its type.
        public static let unknownTag = Reason(rawValue: "unknown_tag")
        /// A presence bitmask sets bits this version does not define.
        public static let unknownFlags = Reason(rawValue: "unknown_flags")
        /// An item is not in its single canonical form: a varint with needless zero groups,
        /// `userInfo` keys out of order or repeated, an empty list or a default value marked
        /// present.
        public static let nonCanonical = Reason(rawValue: "non_canonical")
        /// `userInfo` is nested deeper than ``Reminder/maximumBinaryUserInfoDepth``.
        public static let tooDeep = Reason(rawValue: "too_deep")
        /// Bytes follow the end of the item (a reminder, a record, a frame).
        public static let trailingBytes = Reason(rawValue: "trailing_bytes")
    }

    /// Why the bytes were refused.
    public var reason: Reason
    /// Where the refused item starts, in bytes from the first byte of the input.
    public var offset: Int

    /// Creates the value from its fields.
    public init(_ reason: Reason, offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    /// `"binary: <reason> at offset <offset>"`.
    public var description: String { "binary: \(reason) at offset \(offset)" }

    public static func == (lhs: BinaryDecodingError, rhs: BinaryDecodingError) -> Bool { lhs.reason == rhs.reason }
    public func hash(into hasher: inout Hasher) { hasher.combine(reason) }
}
