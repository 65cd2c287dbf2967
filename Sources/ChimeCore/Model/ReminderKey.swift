import Foundation

/// Which reminder: its id *and* its recipient. Reminder ids are unique per recipient, as iOS
/// notification identifiers are per app, so two recipients may each have a `standup`; the key
/// names one of them, and its recipient is the routing key a sharded cluster places it by.
///
/// Kept as one string, `<id>\0<recipient>` (ids and recipients hold no control characters),
/// so a key costs what an id cost before (inline up to 15 UTF-8 bytes, one allocation
/// otherwise) and orders by id, then recipient: `list` pages keep id order, and every key of
/// one id is a contiguous run of the coordinator's index.
///
/// A *legacy* key (`isLegacy`) has no recipient: it names a reminder by its id alone, as stores,
/// journal entries and firing ids written before ids were per recipient did (their ids were
/// unique in the whole store). The coordinator resolves it to the one key with that id.
///
/// Text form (``text``, for people and the firing id): `<recipient>/<id>`, the recipient with
/// `%` and `/` percent-escaped (`%25`, `%2F`); a legacy key's text is its id.
public struct ReminderKey: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// `<id>\0<recipient>`, or the id alone for a legacy key.
    public let storage: String

    /// The key of `recipient`'s reminder `id`.
    @inlinable
    public init(_ id: ReminderID, of recipient: RecipientID) {
        storage = id.rawValue + "\u{0}" + recipient.rawValue
    }

    /// A key naming a reminder by its id alone (see the type's documentation).
    public init(legacy id: ReminderID) { storage = id.rawValue }

    /// A key from its storage form.
    /// - Returns: `nil` when `storage` holds more than one separator or an empty part.
    public init?(storage: String) {
        let parts = storage.utf8.split(separator: 0, omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy({ !$0.isEmpty }) else { return nil }
        self.storage = storage
    }

    /// The reminder id.
    public var id: ReminderID {
        guard let separator = storage.utf8.firstIndex(of: 0) else { return ReminderID(storage) }
        return ReminderID(String(storage[..<separator]))
    }

    /// The recipient; empty for a legacy key.
    public var recipient: RecipientID {
        guard let separator = storage.utf8.firstIndex(of: 0) else { return RecipientID("") }
        return RecipientID(String(storage[storage.utf8.index(after: separator)...]))
    }

    /// Whether the key names a reminder by its id alone.
    public var isLegacy: Bool { !storage.utf8.contains(0) }

    /// The key of the same id for `recipient` (how a legacy key is resolved).
    public func resolved(to recipient: RecipientID) -> ReminderKey { ReminderKey(id, of: recipient) }

    /// The smallest key of `id` (a legacy key sorts before every key of its id), to walk the
    /// run of keys with that id in an ordered index.
    public static func first(of id: ReminderID) -> ReminderKey { ReminderKey(legacy: id) }

    /// Whether this key names reminder `id` (of any recipient).
    public func hasID(_ id: ReminderID) -> Bool {
        let utf8 = storage.utf8
        let prefix = id.rawValue.utf8
        guard utf8.count >= prefix.count, utf8.starts(with: prefix) else { return false }
        let rest = utf8.dropFirst(prefix.count)
        return rest.isEmpty || rest.first == 0
    }

    /// `<recipient>/<id>` with the recipient escaped; a legacy key's id.
    public var text: String {
        isLegacy ? storage : "\(Self.escaped(recipient.rawValue))/\(id.rawValue)"
    }

    /// The text form.
    public var description: String { text }

    /// Orders by id, then recipient (the storage's order: the separator sorts first).
    public static func < (lhs: ReminderKey, rhs: ReminderKey) -> Bool { lhs.storage < rhs.storage }

    /// FNV-1a of the storage's first and last 16 bytes and its length (as `StringIdentifier`'s):
    /// a cheap, unseeded spread to pick a stripe of a `StripedDictionary`.
    public var stripeHash: UInt { ReminderID(storage).stripeHash }

    /// Decodes the storage form (a JSON string); a string without a separator is a legacy key.
    /// - Throws: `DecodingError.dataCorrupted` for an empty part or a second separator.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let key = ReminderKey(storage: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not a reminder key")
        }
        self = key
    }

    /// Encodes the storage form as a JSON string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(storage)
    }

    /// `recipient` with `%` and `/` percent-escaped, for the text forms. Scalar by scalar, not
    /// by `Character`: a `%` or `/` after a prepending mark (U+06DD) is one grapheme with it.
    public static func escaped(_ recipient: String) -> String {
        guard recipient.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "/") }) else { return recipient }
        var result = String.UnicodeScalarView()
        for scalar in recipient.unicodeScalars {
            switch scalar {
            case "%": result.append(contentsOf: "%25".unicodeScalars)
            case "/": result.append(contentsOf: "%2F".unicodeScalars)
            default: result.append(scalar)
            }
        }
        return String(result)
    }

    /// The recipient an escaped text names, or `nil` when it is not one (an empty text, a `%`
    /// not followed by `25` or `2F`, a raw `/`). Read scalar by scalar, as ``escaped(_:)``
    /// writes (a `Character` search misses a `%` or `/` joined to a prepending mark).
    public static func unescaped(_ text: Substring) -> String? {
        guard !text.isEmpty else { return nil }
        guard text.utf8.contains(UInt8(ascii: "%")) else {
            return text.utf8.contains(UInt8(ascii: "/")) ? nil : String(text)
        }
        var result = String.UnicodeScalarView()
        var scalars = text.unicodeScalars[...]
        while let scalar = scalars.popFirst() {
            switch scalar {
            case "/": return nil
            case "%":
                let code = Array(scalars.prefix(2))
                guard code.count == 2, code[0] == "2" else { return nil }
                switch code[1] {
                case "5": result.append("%")
                case "F": result.append("/")
                default: return nil
                }
                scalars = scalars.dropFirst(2)
            default: result.append(scalar)
            }
        }
        return String(result)
    }
}

extension Reminder {
    /// The reminder's key: its id and its recipient.
    public var key: ReminderKey { ReminderKey(id, of: recipient) }
}
