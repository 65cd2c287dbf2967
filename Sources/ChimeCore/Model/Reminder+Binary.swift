import Foundation

/// The compact binary form, meant for the coordinator's memory, journal records and snapshots.
extension Reminder {
    /// The format version this build writes and reads: the first byte of every encoding.
    public static let binaryFormatVersion: UInt8 = 1

    /// The deepest `userInfo` nesting `init(binary:)` reads, counted as
    /// `PropertyListValue.depth` counts it (the dictionary itself is level 1). Twice
    /// ``Content/maximumUserInfoDepth``, so every valid reminder fits; a deeper one (which
    /// validation refuses) still encodes, but its bytes do not decode.
    public static let maximumBinaryUserInfoDepth = 64

    /// The reminder in the compact binary form, format version 1; `init(binary:)`
    /// reads it back to an equal reminder, every field exact (`nil` and empty differ, doubles
    /// and instants keep their bit patterns).
    ///
    /// Primitives: `u8` one byte; `varint` unsigned LEB128 (7 bits a byte, least significant
    /// group first, high bit on every byte but the last; at most 10 bytes, no needless zero
    /// groups); `int` a zigzag varint, `(n << 1) ^ (n >> 63)` so 0, −1, 1, −2 are 0, 1, 2, 3
    /// (`Int` and `Int64` alike); `f64` the IEEE 754 bit pattern, 8 bytes little-endian;
    /// `str` a varint byte count and that many bytes of UTF-8; `instant` an `f64` of seconds
    /// since 2001-01-01T00:00:00Z (`timeIntervalSinceReferenceDate`); `local` a
    /// ``LocalDateTime`` as six `int`s, year, month, day, hour, minute, second; `datetime` a
    /// ``RecurrenceDateTime``, `u8` 0 + `instant` or `u8` 1 + `local`; `list<T>` a varint
    /// count of at least 1 and that many `T` (an empty list is absent, its bit clear).
    ///
    /// Layout; a field after `flags` is present only when its bit is set:
    /// 1. `u8` version (1); `str` id; `str` recipient (first, so `binaryRecipient(in:)`
    ///    reads it without the rest).
    /// 2. `varint` flags: bit 0 enabled, 1 title, 2 body, 3 sound, 4 badgeChange, 5 userInfo,
    ///    6 wall-clock start (clear: an instant), 7 repeatRule, 8 category, 9 threadId,
    ///    10 action, 11 launchImage, 12 recurrenceRule, 13 recurrenceDates, 14 exceptionDates,
    ///    15 monthEnd `clamp` (no bytes; clear: `skip`), 16 offset, 17 misfire,
    ///    18 misfireThreshold, 19 nag, 20 spread, 21 calendars, 22 sun, 23 region, 24 RSCALE
    ///    rule, 25 subtitle, 26 interruptionLevel (other than active), 27 relevanceScore,
    ///    28 targetContentIdentifier, 29 filterCriteria, 30 `hasAction` false (no bytes),
    ///    31 unhandled (other than stack), 32 collapseKey; higher bits must be clear. The common fields
    ///    sit in the low 7 bits, so most reminders spend one byte here.
    /// 3. Content: `str` title, body, action, launchImage, sound; badgeChange as `u8` 0 +
    ///    `int` for `.set(n)` or `u8` 1 for `.increment`; userInfo as a plist dictionary
    ///    body; `str` category, threadId.
    /// 4. Trigger: the start, `instant` (bit 6 clear) or `local` + `str` zone identifier;
    ///    repeatRule as `u8` unit (0 minute, 1 hour, 2 day, 3 week, 4 month, 5 year) + `int`
    ///    interval; recurrenceRule; recurrenceDates and exceptionDates, each a
    ///    `list<datetime>`; `f64` offset (seconds); misfire `u8` (0 fireOnce, 1 skip,
    ///    2 fireAll); `f64` misfireThreshold (seconds).
    /// 5. Nag: `int` count, `f64` interval (seconds).
    /// 6. Trigger parts added later, each present only with its bit: `f64` spread (seconds,
    ///    bit 20); calendars, a `list<str>` of names (bit 21); sun (bit 22), `u8` event
    ///    (0 sunrise, 1 sunset, 2 dawn, 3 dusk, 4 noon), `f64` depression, `f64` offset, `u8`
    ///    1 + `f64` latitude + `f64` longitude for a fixed place or `u8` 0 for the recipient's;
    ///    region (bit 23), `f64` latitude, longitude, radius, `u8` flags (1 entry, 2 exit,
    ///    4 once); an RSCALE rule (bit 24), `str` its canonical text (``ScaledRule``). Bytes
    ///    written before they existed have these bits clear and read as before.
    /// 7. Content parts added later, each present only with its bit: `str` subtitle (bit 25),
    ///    `u8` interruption level (bit 26; 0 passive, 2 timeSensitive, 3 critical; 1 active is
    ///    never written), `f64` relevanceScore (bit 27), `str` targetContentIdentifier
    ///    (bit 28), `str` filterCriteria (bit 29), `u8` unhandled (bit 31; 1 replace, 2 skip; 0
    ///    stack is never written), `str` collapseKey (bit 32).
    ///
    /// A plist value is a `u8` tag and its payload: 0 string `str`, 1 integer `int`, 2 real
    /// `f64`, 3 false, 4 true, 5 array (`varint` count, values), 6 dictionary body
    /// (`varint` count, then `str` key and value per entry, keys in strictly ascending
    /// UTF-8 byte order so the bytes are deterministic). Decoding refuses values nested deeper
    /// than level ``maximumBinaryUserInfoDepth`` and keys that are equal as `String`s.
    ///
    /// A recurrence rule is `u8` FREQ (0 MINUTELY, 1 HOURLY, 2 DAILY, 3 WEEKLY, 4 MONTHLY,
    /// 5 YEARLY), `int` INTERVAL, `varint` parts, then each part whose bit is set, in bit
    /// order: 0 COUNT `int`, 1 UNTIL `datetime`, 2 BYDAY `list` of `u8` weekday (1 Monday …
    /// 7 Sunday, plus 8 when an `int` ordinal follows), 3 BYMONTHDAY, 4 BYMONTH,
    /// 5 BYSETPOS, 6 BYHOUR, 7 BYMINUTE, 8 BYSECOND, 9 BYWEEKNO, 10 BYYEARDAY (each
    /// `list<int>`), 11 WKST `u8` weekday other than Monday. It is stored field by field,
    /// not as RFC 5545 text, because the text drops UNTIL's sub-seconds and cannot hold a
    /// rule that is not yet validated; rdates and exdates likewise, since their text keeps
    /// milliseconds only.
    ///
    /// Decoding accepts only what this encoder writes (minimal varints, sorted keys, no empty
    /// list or default value marked present), so decoding and encoding again gives back the
    /// input bytes; equal reminders whose strings have equal UTF-8 encode equally. A one-shot with an instant start, a
    /// 15-byte id, a 9-byte recipient and a 100-byte body takes 137 bytes.
    public func binaryEncoded() -> [UInt8] {
        // Count first, so the array holds exactly the bytes: a million of them stay in memory.
        var counter = ByteCounter()
        writeBinary(to: &counter)
        var writer = ByteWriter(capacity: counter.count)
        writeBinary(to: &writer)
        assert(writer.bytes.count == counter.count, "the byte counter and writer disagree")
        return writer.bytes
    }

    /// Decodes the binary form of ``binaryEncoded()``.
    ///
    /// Checks the structure, not the meaning: values come back as stored, unvalidated as
    /// the memberwise initializers leave them (``validate(maximumUserInfoBytes:)`` checks them).
    /// - Throws: ``BinaryDecodingError`` for an unknown version, truncated bytes, a varint
    ///   over 64 bits, a length past the end, invalid UTF-8, an unknown tag or flag, a
    ///   non-canonical item, `userInfo` nested too deep, or trailing bytes.
    public init(binary bytes: ArraySlice<UInt8>) throws(BinaryDecodingError) {
        var reader = ByteReader(bytes)
        try Self.readBinaryVersion(from: &reader)
        id = ReminderID(try reader.readString())
        recipient = RecipientID(try reader.readString())
        let fields = try ReminderBinaryFields(reading: &reader)
        content = try Content(reading: &reader, fields: fields)
        trigger = try Trigger(reading: &reader, fields: fields)
        enabled = fields.contains(.enabled)
        if fields.contains(.nag) {
            nag = NagPolicy(count: try reader.readInt(), interval: try reader.readDouble())
        }
        try trigger.readBinaryExtensions(from: &reader, fields: fields)
        try content.readBinaryExtensions(from: &reader, fields: fields)
        try reader.expectEnd()
    }

    /// Decodes the binary form of ``binaryEncoded()``; see `init(binary:)`.
    /// - Throws: ``BinaryDecodingError`` as `init(binary:)` does.
    public init(binary bytes: [UInt8]) throws(BinaryDecodingError) {
        try self.init(binary: bytes[...])
    }

    /// The recipient of an encoded reminder, read without decoding the rest: the version and
    /// the recipient are checked, the id only for its length, and the bytes after them not at all.
    /// - Throws: ``BinaryDecodingError`` when the version, id or recipient cannot be read.
    public static func binaryRecipient(in bytes: ArraySlice<UInt8>) throws(BinaryDecodingError) -> RecipientID {
        var reader = ByteReader(bytes)
        try readBinaryVersion(from: &reader)
        try reader.skipString()
        return RecipientID(try reader.readString())
    }

    /// The recipient of an encoded reminder; see `binaryRecipient(in:)`.
    /// - Throws: ``BinaryDecodingError`` when the version, id or recipient cannot be read.
    public static func binaryRecipient(in bytes: [UInt8]) throws(BinaryDecodingError) -> RecipientID {
        try binaryRecipient(in: bytes[...])
    }

    /// What the coordinator keeps decoded of an encoded reminder, read from the bytes up to
    /// the presence bitmask only (no content or trigger decoded).
    public struct BinarySummary: Hashable, Sendable {
        /// The reminder's recipient.
        public var recipient: RecipientID
        /// Whether the trigger repeats (`Trigger.isRepeating`: a repeat, a rule or RDATEs).
        public var isRepeating: Bool
        /// Whether the reminder has a nag policy.
        public var hasNag: Bool
        /// Whether the trigger has a remind-before offset (`Trigger.offset`).
        public var hasOffset: Bool
        /// Whether the trigger has a spread (`Trigger.spread`).
        public var hasSpread: Bool = false
        /// Whether the trigger names calendars, follows the sun or a region (what a
        /// coordinator indexes beside the schedule).
        public var isBeyondTheClock: Bool = false
    }

    /// The recipient, repeat, nag and offset flags of an encoded reminder.
    /// - Throws: ``BinaryDecodingError`` when the version, id, recipient or flags cannot be read.
    public static func binarySummary(in bytes: ArraySlice<UInt8>) throws(BinaryDecodingError) -> BinarySummary {
        var reader = ByteReader(bytes)
        try readBinaryVersion(from: &reader)
        try reader.skipString()
        let recipient = RecipientID(try reader.readString())
        let fields = ReminderBinaryFields(rawValue: try reader.readVarint())
        return BinarySummary(
            recipient: recipient,
            isRepeating: !fields.isDisjoint(with: [.repeatRule, .recurrenceRule, .recurrenceDates, .sun, .scaledRule]),
            hasNag: fields.contains(.nag), hasOffset: fields.contains(.offset), hasSpread: fields.contains(.spread),
            isBeyondTheClock: !fields.isDisjoint(with: [.calendars, .sun, .region]))
    }

    func writeBinary(to sink: inout some BinarySink) {
        sink.writeByte(Self.binaryFormatVersion)
        sink.writeString(id.rawValue)
        sink.writeString(recipient.rawValue)
        var fields = content.binaryFields.union(trigger.binaryFields)
        if enabled { fields.insert(.enabled) }
        if nag != nil { fields.insert(.nag) }
        sink.writeVarint(fields.rawValue)
        content.writeBinary(to: &sink)
        trigger.writeBinary(to: &sink)
        if let nag {
            sink.writeInt(nag.count)
            sink.writeDouble(nag.interval)
        }
        trigger.writeBinaryExtensions(to: &sink)
        content.writeBinaryExtensions(to: &sink)
    }

    private static func readBinaryVersion(from reader: inout ByteReader) throws(BinaryDecodingError) {
        guard try reader.readByte() == binaryFormatVersion else {
            throw BinaryDecodingError(.unknownVersion, offset: 0)
        }
    }
}

/// The presence bitmask of the binary form (see ``Reminder/binaryEncoded()``): a bit per
/// optional field, plus `enabled`, the start's kind and `monthEnd`.
struct ReminderBinaryFields: OptionSet {
    let rawValue: UInt64

    static let enabled = Self(rawValue: 1 << 0)
    static let title = Self(rawValue: 1 << 1)
    static let body = Self(rawValue: 1 << 2)
    static let sound = Self(rawValue: 1 << 3)
    static let badgeChange = Self(rawValue: 1 << 4)
    static let userInfo = Self(rawValue: 1 << 5)
    static let wallClockStart = Self(rawValue: 1 << 6)
    static let repeatRule = Self(rawValue: 1 << 7)
    static let category = Self(rawValue: 1 << 8)
    static let threadId = Self(rawValue: 1 << 9)
    static let action = Self(rawValue: 1 << 10)
    static let launchImage = Self(rawValue: 1 << 11)
    static let recurrenceRule = Self(rawValue: 1 << 12)
    static let recurrenceDates = Self(rawValue: 1 << 13)
    static let exceptionDates = Self(rawValue: 1 << 14)
    static let clampMonthEnd = Self(rawValue: 1 << 15)
    static let offset = Self(rawValue: 1 << 16)
    static let misfire = Self(rawValue: 1 << 17)
    static let misfireThreshold = Self(rawValue: 1 << 18)
    static let nag = Self(rawValue: 1 << 19)
    static let spread = Self(rawValue: 1 << 20)
    static let calendars = Self(rawValue: 1 << 21)
    static let sun = Self(rawValue: 1 << 22)
    static let region = Self(rawValue: 1 << 23)
    static let scaledRule = Self(rawValue: 1 << 24)
    static let subtitle = Self(rawValue: 1 << 25)
    static let interruptionLevel = Self(rawValue: 1 << 26)
    static let relevanceScore = Self(rawValue: 1 << 27)
    static let targetContentIdentifier = Self(rawValue: 1 << 28)
    static let filterCriteria = Self(rawValue: 1 << 29)
    static let noAction = Self(rawValue: 1 << 30)
    static let unhandled = Self(rawValue: 1 << 31)
    static let collapseKey = Self(rawValue: 1 << 32)
    static let attachments = Self(rawValue: 1 << 33)
    static let titleKey = Self(rawValue: 1 << 34)
    static let titleArgs = Self(rawValue: 1 << 35)
    static let bodyKey = Self(rawValue: 1 << 36)
    static let bodyArgs = Self(rawValue: 1 << 37)
    static let soundVolume = Self(rawValue: 1 << 38)
    static let throttled = Self(rawValue: 1 << 39)

    static let defined = Self(rawValue: (1 << 40) - 1)

    init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Reads the bitmask, refusing bits this version does not define.
    init(reading reader: inout ByteReader) throws(BinaryDecodingError) {
        let offset = reader.offset
        self.init(rawValue: try reader.readVarint())
        guard Self.defined.isSuperset(of: self) else { throw BinaryDecodingError(.unknownFlags, offset: offset) }
    }
}

extension Content {
    var binaryFields: ReminderBinaryFields {
        var fields: ReminderBinaryFields = []
        if title != nil { fields.insert(.title) }
        if body != nil { fields.insert(.body) }
        if action != nil { fields.insert(.action) }
        if launchImage != nil { fields.insert(.launchImage) }
        if sound != nil { fields.insert(.sound) }
        if badgeChange != nil { fields.insert(.badgeChange) }
        if userInfo != nil { fields.insert(.userInfo) }
        if category != nil { fields.insert(.category) }
        if threadId != nil { fields.insert(.threadId) }
        if hasAttentionFields {
            if subtitle != nil { fields.insert(.subtitle) }
            if interruptionLevel != .active { fields.insert(.interruptionLevel) }
            if relevanceScore != nil { fields.insert(.relevanceScore) }
            if targetContentIdentifier != nil { fields.insert(.targetContentIdentifier) }
            if filterCriteria != nil { fields.insert(.filterCriteria) }
            if !hasAction { fields.insert(.noAction) }
            if unhandled != .stack { fields.insert(.unhandled) }
            if collapseKey != nil { fields.insert(.collapseKey) }
            if attachments != nil { fields.insert(.attachments) }
            if titleKey != nil { fields.insert(.titleKey) }
            if titleArgs != nil { fields.insert(.titleArgs) }
            if bodyKey != nil { fields.insert(.bodyKey) }
            if bodyArgs != nil { fields.insert(.bodyArgs) }
            if soundVolume != nil { fields.insert(.soundVolume) }
            if throttled != .hold { fields.insert(.throttled) }
        }
        return fields
    }

    func writeBinaryExtensions(to sink: inout some BinarySink) {
        guard hasAttentionFields else { return }
        if let subtitle { sink.writeString(subtitle) }
        if interruptionLevel != .active { sink.writeByte(interruptionLevel.binaryTag) }
        if let relevanceScore { sink.writeDouble(relevanceScore) }
        if let targetContentIdentifier { sink.writeString(targetContentIdentifier) }
        if let filterCriteria { sink.writeString(filterCriteria) }
        if unhandled != .stack { sink.writeByte(unhandled.binaryTag) }
        if let collapseKey { sink.writeString(collapseKey) }
        writeExtendedBinary(to: &sink)
    }

    /// Writes the extended fields that are present (attachments, titleKey, titleArgs,
    /// bodyKey, bodyArgs, soundVolume, then `throttled` as a tag byte when not `.hold`, in that
    /// order): the reminder's binary form and the dispatch frame share it.
    public func writeExtendedBinary(to sink: inout some BinarySink) {
        if let attachments { NotificationAttachment.writeBinary(attachments, to: &sink) }
        if let titleKey { sink.writeString(titleKey) }
        if let titleArgs { Self.writeStrings(titleArgs, to: &sink) }
        if let bodyKey { sink.writeString(bodyKey) }
        if let bodyArgs { Self.writeStrings(bodyArgs, to: &sink) }
        if let soundVolume { sink.writeDouble(soundVolume) }
        if throttled != .hold { sink.writeByte(throttled.binaryTag) }
    }

    /// Reads the extended fields ``writeExtendedBinary(to:)`` wrote, those the flags name.
    /// - Throws: `BinaryDecodingError` for bytes cut short or a count past them.
    public mutating func readExtendedBinary(
        from reader: inout ByteReader, attachments hasAttachments: Bool, titleKey hasTitleKey: Bool, titleArgs hasTitleArgs: Bool,
        bodyKey hasBodyKey: Bool, bodyArgs hasBodyArgs: Bool, soundVolume hasSoundVolume: Bool, throttled hasThrottled: Bool
    ) throws(BinaryDecodingError) {
        if hasAttachments { attachments = try NotificationAttachment.readBinaryList(from: &reader) }
        if hasTitleKey { titleKey = try reader.readString() }
        if hasTitleArgs { titleArgs = try Self.readStrings(from: &reader) }
        if hasBodyKey { bodyKey = try reader.readString() }
        if hasBodyArgs { bodyArgs = try Self.readStrings(from: &reader) }
        if hasSoundVolume { soundVolume = try reader.readDouble() }
        if hasThrottled {
            // Hold is the default, never marked present: refusing it keeps the bytes canonical.
            throttled = try reader.readTag { tag in tag == 0 ? nil : ThrottledPolicy(binaryTag: tag) }
        }
    }

    /// A list of strings: its count, then each string.
    static func writeStrings(_ list: [String], to sink: inout some BinarySink) {
        sink.writeCount(list.count)
        for text in list { sink.writeString(text) }
    }

    /// Reads ``writeStrings(_:to:)``'s form.
    static func readStrings(from reader: inout ByteReader) throws(BinaryDecodingError) -> [String] {
        let count = try reader.readCount(minimumElementSize: 1)
        var list: [String] = []
        list.reserveCapacity(count)
        for _ in 0..<count { list.append(try reader.readString()) }
        return list
    }

    mutating func readBinaryExtensions(from reader: inout ByteReader, fields: ReminderBinaryFields) throws(BinaryDecodingError) {
        let attention: ReminderBinaryFields = [
            .subtitle, .interruptionLevel, .relevanceScore, .targetContentIdentifier, .filterCriteria, .noAction,
            .unhandled, .collapseKey, .attachments, .titleKey, .titleArgs, .bodyKey, .bodyArgs, .soundVolume, .throttled,
        ]
        guard !fields.isDisjoint(with: attention) else { return }
        if fields.contains(.subtitle) { subtitle = try reader.readString() }
        if fields.contains(.interruptionLevel) {
            // Active is the default, never marked present: refusing it keeps the bytes canonical.
            interruptionLevel = try reader.readTag { tag in tag == 1 ? nil : InterruptionLevel(binaryTag: tag) }
        }
        if fields.contains(.relevanceScore) { relevanceScore = try reader.readDouble() }
        if fields.contains(.targetContentIdentifier) { targetContentIdentifier = try reader.readString() }
        if fields.contains(.filterCriteria) { filterCriteria = try reader.readString() }
        hasAction = !fields.contains(.noAction)
        if fields.contains(.unhandled) {
            // Stack is the default, never marked present.
            unhandled = try reader.readTag { tag in tag == 0 ? nil : UnhandledPolicy(binaryTag: tag) }
        }
        if fields.contains(.collapseKey) { collapseKey = try reader.readString() }
        try readExtendedBinary(
            from: &reader, attachments: fields.contains(.attachments), titleKey: fields.contains(.titleKey),
            titleArgs: fields.contains(.titleArgs), bodyKey: fields.contains(.bodyKey), bodyArgs: fields.contains(.bodyArgs),
            soundVolume: fields.contains(.soundVolume), throttled: fields.contains(.throttled))
    }

    func writeBinary(to sink: inout some BinarySink) {
        if let title { sink.writeString(title) }
        if let body { sink.writeString(body) }
        if let action { sink.writeString(action) }
        if let launchImage { sink.writeString(launchImage) }
        if let sound { sink.writeString(sound) }
        switch badgeChange {
        case .set(let number):
            sink.writeByte(0)
            sink.writeInt(number)
        case .increment: sink.writeByte(1)
        case nil: break
        }
        if let userInfo { PropertyListValue.writeBinaryEntries(of: userInfo, to: &sink) }
        if let category { sink.writeString(category) }
        if let threadId { sink.writeString(threadId) }
    }

    init(reading reader: inout ByteReader, fields: ReminderBinaryFields) throws(BinaryDecodingError) {
        title = fields.contains(.title) ? try reader.readString() : nil
        body = fields.contains(.body) ? try reader.readString() : nil
        action = fields.contains(.action) ? try reader.readString() : nil
        launchImage = fields.contains(.launchImage) ? try reader.readString() : nil
        sound = fields.contains(.sound) ? try reader.readString() : nil
        if fields.contains(.badgeChange) {
            let isIncrement = try reader.readTag { tag in tag <= 1 ? tag == 1 : nil }
            badgeChange = isIncrement ? .increment : .set(try reader.readInt())
        }
        userInfo = fields.contains(.userInfo) ? try PropertyListValue.readBinaryEntries(from: &reader, level: 1) : nil
        category = fields.contains(.category) ? try reader.readString() : nil
        threadId = fields.contains(.threadId) ? try reader.readString() : nil
        interruptionLevel = .active
        hasAction = true
        unhandled = .stack
    }
}
