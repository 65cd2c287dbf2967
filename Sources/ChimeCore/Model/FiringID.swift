import Foundation

/// The idempotency key of one occurrence of a reminder, or of one nag of it: the reminder's
/// key (its id and recipient), the occurrence's due instant to the millisecond and the nag
/// number.
///
/// Its text form, used in JSON, on the CLI and in fire events, is `<recipient>/<reminderId>@<dueAt>`
/// with the recipient escaped as in ``ReminderKey/text`` and the due instant in RFC 3339 UTC
/// with exactly three fractional digits (`team/standup@2026-12-24T08:00:00.000Z`), and
/// `#nag<n>` appended for nag `n` (`team/standup@2026-12-24T08:00:00.000Z#nag2`). The
/// recipient leads, so a client routes a request naming a firing (ack, act, retry, a job id
/// that starts with its firing id) to the shard of that recipient without asking every
/// coordinator. Ids made before ids were per recipient read `<reminderId>@<dueAt>`: they parse
/// as legacy ids (``isLegacy``), which the coordinator resolves by the reminder id.
///
/// The value is what the coordinator keys its maps with and what the binary frames and the
/// journal carry, so a firing costs no text formatting or parsing on the hot path; the text is
/// made only where a person or a JSON client reads it.
///
/// A redelivery after a crash or lease expiry reuses the same id, so receivers can
/// de-duplicate. Two ids are equal exactly when their texts are equal.
public struct FiringID: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// The reminder the occurrence belongs to.
    public var key: ReminderKey
    /// The occurrence's due instant in milliseconds since 1970-01-01T00:00:00Z, as its text
    /// shows it (`RFC3339.unixMilliseconds(of:)`: floor, years 0001–9999).
    public var dueAtMilliseconds: Int64
    /// The nag number, 1 or more for a nag; 0 for the firing itself.
    public var nag: UInt32

    /// Makes the firing id of `key`'s occurrence due at `dueAt` (UTC instant).
    public init(_ key: ReminderKey, dueAt: Date) {
        self.init(key, dueAtMilliseconds: RFC3339.unixMilliseconds(of: dueAt))
    }

    /// Makes an id from its parts; `dueAtMilliseconds` is clamped to years 0001–9999 (what
    /// RFC 3339 parsing accepts), so every value has a text form that parses back to it.
    public init(_ key: ReminderKey, dueAtMilliseconds: Int64, nag: UInt32 = 0) {
        self.key = key
        self.dueAtMilliseconds = min(max(dueAtMilliseconds, Self.earliest), RFC3339.maximumUnixMilliseconds)
        self.nag = nag
    }

    /// The reminder id.
    public var reminder: ReminderID { key.id }

    /// The recipient (the routing key); empty for a legacy id.
    public var recipient: RecipientID { key.recipient }

    /// Whether the id names its reminder by id alone (made before ids were per recipient).
    public var isLegacy: Bool { key.isLegacy }

    /// The same id with its reminder key resolved to `recipient`.
    public func resolved(to recipient: RecipientID) -> FiringID {
        FiringID(key.resolved(to: recipient), dueAtMilliseconds: dueAtMilliseconds, nag: nag)
    }

    /// The reading of the same text as a legacy id, when its text has a `/` (a legacy reminder
    /// id may hold one: `cal/1@…` is recipient `cal`'s `1`, or the legacy id `cal/1`).
    public var legacyReading: FiringID? {
        guard !isLegacy else { return nil }
        let text = key.text
        return FiringID(ReminderKey(legacy: ReminderID(text)), dueAtMilliseconds: dueAtMilliseconds, nag: nag)
    }

    /// 0001-01-01T00:00:00.000Z in Unix milliseconds.
    static let earliest: Int64 = -62_135_596_800_000

    /// The id of nag `number` of `firing` (numbers below 1 count as 1).
    public init(nag number: Int, of firing: FiringID) {
        self.init(firing.key, dueAtMilliseconds: firing.dueAtMilliseconds, nag: UInt32(clamping: max(1, number)))
    }

    /// Parses the text form, `<recipient>/<reminderId>@YYYY-MM-DDTHH:MM:SS.mmmZ[#nag<n>]`, or the
    /// legacy form without `<recipient>/` (``isLegacy``; so is a text whose part before its
    /// first `/` is not an escaped recipient); `nil` unless the text is exactly what `text`
    /// would print for the parsed value (three fractional digits, upper-case `T` and `Z`, a
    /// nag number from 1 to 4294967295 without leading zeros) and the reminder id is
    /// non-empty. The reminder id may itself contain `@` and `/`: the last `@` separates the
    /// instant, the first `/` the recipient.
    public init?(_ text: String) { self.init(text, legacy: false) }

    /// Parses a text form (`init(_:)`); with `legacy` the whole part before the instant is
    /// the reminder id (how the journal and snapshots of earlier versions wrote it).
    public init?(_ text: String, legacy: Bool) {
        let utf8 = Array(text.utf8)
        // A NUL separates a key's id from its recipient: never part of a name.
        guard !utf8.contains(0) else { return nil }
        var baseEnd = utf8.count
        var nag: UInt32 = 0
        if let marker = Self.nagMarkerStart(in: utf8) {
            let digits = utf8[(marker + 4)...]
            guard digits.first != UInt8(ascii: "0") else { return nil }
            var value: UInt64 = 0
            for digit in digits {
                value = value * 10 + UInt64(digit - UInt8(ascii: "0"))
                guard value <= UInt64(UInt32.max) else { return nil }
            }
            nag = UInt32(value)
            baseEnd = marker
        }
        let stampLength = 24
        guard baseEnd >= stampLength + 2, utf8[baseEnd - stampLength - 1] == UInt8(ascii: "@") else { return nil }
        let stamp = String(decoding: utf8[(baseEnd - stampLength)..<baseEnd], as: UTF8.self)
        guard let instant = try? RFC3339.parseInstant(stamp) else { return nil }
        let milliseconds = RFC3339.unixMilliseconds(of: instant)
        guard RFC3339.format(unixMilliseconds: milliseconds) == stamp else { return nil }
        let base = String(decoding: utf8[..<(baseEnd - stampLength - 1)], as: UTF8.self)
        guard let key = Self.key(reading: base, legacy: legacy) else { return nil }
        self.init(key, dueAtMilliseconds: milliseconds, nag: nag)
    }

    /// The reminder key a text form's part before the instant names; `nil` for an escaped
    /// recipient followed by an empty reminder id, an empty recipient or nothing at all.
    static func key(reading base: String, legacy: Bool) -> ReminderKey? {
        // The first `/` scalar, not `Character`: one after a prepending mark (U+06DD) is one
        // grapheme with it.
        if !legacy, let slash = base.unicodeScalars.firstIndex(of: "/"), let recipient = ReminderKey.unescaped(base[..<slash]) {
            let id = base[base.unicodeScalars.index(after: slash)...]
            guard !id.isEmpty, !recipient.isEmpty else { return nil }
            return ReminderKey(ReminderID(String(id)), of: RecipientID(recipient))
        }
        guard !base.isEmpty else { return nil }
        return ReminderKey(legacy: ReminderID(base))
    }

    /// The text form, `<recipient>/<reminderId>@<dueAt>[#nag<n>]` (legacy: `<reminderId>@…`).
    public var text: String {
        let base = "\(key.text)@\(RFC3339.format(unixMilliseconds: dueAtMilliseconds))"
        return nag == 0 ? base : "\(base)#nag\(nag)"
    }

    /// The text form.
    public var description: String { text }

    /// The due instant the id names (UTC, to the millisecond).
    public var dueAt: Date { Date.wholeMillisecond(dueAtMilliseconds) }

    /// The nag number of a nag id, or `nil` for a firing id.
    public var nagNumber: Int? { nag == 0 ? nil : Int(nag) }

    /// Whether this is a nag id.
    public var isNag: Bool { nag != 0 }

    /// The firing a nag id belongs to; a firing id itself otherwise. Handling either
    /// handles the firing and cancels its remaining nags.
    public var nagBase: FiringID {
        var base = self
        base.nag = 0
        return base
    }

    /// Orders by reminder key (id, then recipient), then due instant, then nag number.
    public static func < (lhs: FiringID, rhs: FiringID) -> Bool {
        (lhs.key.storage, lhs.dueAtMilliseconds, lhs.nag) < (rhs.key.storage, rhs.dueAtMilliseconds, rhs.nag)
    }

    /// Decodes the text form (with `FiringID.legacyTextKey` set in the decoder's user info, the
    /// legacy form of earlier journals and snapshots).
    /// - Throws: `DecodingError.dataCorrupted` when the string is not a firing id.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let id = FiringID(text, legacy: decoder.userInfo[Self.legacyTextKey] as? Bool ?? false) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text)' is not a firing id such as team/standup@2026-12-24T08:00:00.000Z")
        }
        self = id
    }

    /// The user-info key that makes a decoder read firing ids in their legacy text form
    /// (`<reminderId>@<dueAt>`, as journals and snapshots of earlier versions hold them).
    public static let legacyTextKey = CodingUserInfoKey(rawValue: "chime.legacyFiringIDs")!

    /// Encodes the text form as a JSON string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    /// The index of `#nag` when the bytes end with `Z#nag<digits>`.
    private static func nagMarkerStart(in utf8: [UInt8]) -> Int? {
        var digitsStart = utf8.count
        while digitsStart > 0, (0x30...0x39).contains(utf8[digitsStart - 1]) { digitsStart -= 1 }
        guard digitsStart < utf8.count, digitsStart >= 5 else { return nil }
        guard Array(utf8[(digitsStart - 5)..<digitsStart]) == Array("Z#nag".utf8) else { return nil }
        return digitsStart - 4
    }
}
