import Foundation

/// The idempotency key of one occurrence of a reminder, or of one nag of it: the reminder
/// id, the occurrence's due instant to the millisecond and the nag number.
///
/// Its text form, used in JSON, on the CLI and in fire events, is `<reminderId>@<dueAt>`
/// with the due instant in RFC 3339 UTC with exactly three fractional digits
/// (`standup@2026-12-24T08:00:00.000Z`), and `#nag<n>` appended for nag `n`
/// (`standup@2026-12-24T08:00:00.000Z#nag2`). The value is what the coordinator keys its
/// maps with and what the binary frames and the journal carry, so a firing costs no text
/// formatting or parsing on the hot path; the text is made only where a person or a JSON
/// client reads it.
///
/// A redelivery after a crash or lease expiry reuses the same id, so receivers can
/// de-duplicate. Two ids are equal exactly when their texts are equal.
public struct FiringID: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// The reminder the occurrence belongs to.
    public var reminder: ReminderID
    /// The occurrence's due instant in milliseconds since 1970-01-01T00:00:00Z, as its text
    /// shows it (`RFC3339.unixMilliseconds(of:)`: floor, years 0001–9999).
    public var dueAtMilliseconds: Int64
    /// The nag number, 1 or more for a nag; 0 for the firing itself.
    public var nag: UInt32

    /// Makes the firing id of `reminder`'s occurrence due at `dueAt` (UTC instant).
    public init(reminder: ReminderID, dueAt: Date) {
        self.init(reminder: reminder, dueAtMilliseconds: RFC3339.unixMilliseconds(of: dueAt))
    }

    /// Makes an id from its parts; `dueAtMilliseconds` is clamped to years 0001–9999 (what
    /// RFC 3339 parsing accepts), so every value has a text form that parses back to it.
    public init(reminder: ReminderID, dueAtMilliseconds: Int64, nag: UInt32 = 0) {
        self.reminder = reminder
        self.dueAtMilliseconds = min(max(dueAtMilliseconds, Self.earliest), RFC3339.maximumUnixMilliseconds)
        self.nag = nag
    }

    /// 0001-01-01T00:00:00.000Z in Unix milliseconds.
    static let earliest: Int64 = -62_135_596_800_000

    /// The id of nag `number` of `firing` (numbers below 1 count as 1).
    public init(nag number: Int, of firing: FiringID) {
        self.init(
            reminder: firing.reminder, dueAtMilliseconds: firing.dueAtMilliseconds,
            nag: UInt32(clamping: max(1, number)))
    }

    /// Parses the text form, `<reminderId>@YYYY-MM-DDTHH:MM:SS.mmmZ[#nag<n>]`; `nil` unless
    /// the text is exactly what `text` would print for the parsed value (three fractional
    /// digits, upper-case `T` and `Z`, a nag number from 1 to 4294967295 without leading
    /// zeros) and the reminder id is non-empty. The reminder id may itself contain `@`: the
    /// last one separates.
    public init?(_ text: String) {
        let utf8 = Array(text.utf8)
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
        let reminder = String(decoding: utf8[..<(baseEnd - stampLength - 1)], as: UTF8.self)
        self.init(reminder: ReminderID(reminder), dueAtMilliseconds: milliseconds, nag: nag)
    }

    /// The text form, `<reminderId>@<dueAt>[#nag<n>]`.
    public var text: String {
        let base = "\(reminder.rawValue)@\(RFC3339.format(unixMilliseconds: dueAtMilliseconds))"
        return nag == 0 ? base : "\(base)#nag\(nag)"
    }

    /// The text form.
    public var description: String { text }

    /// The due instant the id names (UTC, to the millisecond).
    public var dueAt: Date { Date(timeIntervalSince1970: Double(dueAtMilliseconds) / 1000) }

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

    /// Orders by reminder id, then due instant, then nag number.
    public static func < (lhs: FiringID, rhs: FiringID) -> Bool {
        (lhs.reminder.rawValue, lhs.dueAtMilliseconds, lhs.nag) < (rhs.reminder.rawValue, rhs.dueAtMilliseconds, rhs.nag)
    }

    /// Decodes the text form.
    /// - Throws: `DecodingError.dataCorrupted` when the string is not a firing id.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let id = FiringID(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text)' is not a firing id such as standup@2026-12-24T08:00:00.000Z")
        }
        self = id
    }

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
