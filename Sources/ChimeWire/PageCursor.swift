import ChimeCore
import Foundation

/// Where the next page of a long listing (`list`, `events`, `deadLetters`) starts: the key of
/// the last item the previous page held, so a page continues in key order however many
/// items were added or removed meanwhile (a continuation, not an offset).
///
/// On the wire it is an opaque string (`"cursor"` in a request, `"nextCursor"` in a reply):
/// base64url without padding (RFC 4648 §5) of one kind byte followed by the key's bytes.
/// Clients pass it back unchanged; its form may change between versions.
public struct PageCursor: Hashable, Sendable {
    /// Which listing a cursor continues: a cursor of one listing is refused by another.
    public enum Kind: UInt8, Sendable {
        /// `list`: the key is a reminder id (UTF-8).
        case list = 0x4C
        /// `events`: the key is an event `seq` (8 bytes, big-endian).
        case events = 0x45
        /// `deadLetters`: the key is a firing id's text form (UTF-8).
        case deadLetters = 0x44
        /// `list` in next-fire order: the key is a ``NextFireKey``'s `cursorBytes`.
        case listByNextFire = 0x46
        /// `delivered`: the key is the position of the previous page's last firing in the
        /// recipient's delivered list (4 bytes, big-endian) and that firing's id text (UTF-8).
        case delivered = 0x52
    }

    /// The listing it continues.
    public let kind: Kind
    /// The last key the previous page held, as bytes (see ``Kind``).
    public let key: [UInt8]

    /// A cursor after `key` in the listing `kind`.
    public init(kind: Kind, key: [UInt8]) {
        self.kind = kind
        self.key = key
    }

    /// A cursor after a text key (a reminder id, a firing id's text).
    public init(kind: Kind, text: String) { self.init(kind: kind, key: Array(text.utf8)) }

    /// A cursor after an event `seq`.
    public init(afterSeq seq: UInt64) {
        self.init(kind: .events, key: (0..<8).map { UInt8(truncatingIfNeeded: seq >> (56 - 8 * $0)) })
    }

    /// Reads a cursor a client passed back.
    /// - Throws: `WireError` `.invalidArgument` (field `cursor`) when `text` is not base64url,
    ///   is empty, is longer than ``maximumTextLength``, or was made by another listing.
    public init(text: String, expecting kind: Kind) throws(WireError) {
        func refuse(_ reason: String) -> WireError {
            WireError(.invalidArgument, "the cursor \(reason); pass back a nextCursor unchanged", field: "cursor")
        }
        guard text.utf8.count <= Self.maximumTextLength else { throw refuse("is too long") }
        guard let bytes = Base64URL.decoded(text), let first = bytes.first else { throw refuse("is not valid") }
        guard first == kind.rawValue else { throw refuse("belongs to another listing") }
        self.init(kind: kind, key: Array(bytes.dropFirst()))
    }

    /// The most characters a cursor may have (a reminder id of 4 KiB with room to spare).
    public static let maximumTextLength = 8192

    /// The wire form: base64url without padding.
    public var text: String {
        Base64URL.encoded([kind.rawValue] + key)
    }

    /// The key as UTF-8 text, or `nil` when its bytes are not UTF-8.
    public var textKey: String? { String(validating: key, as: UTF8.self) }

    /// The key as an event `seq`, or `nil` unless it is 8 bytes.
    public var seqKey: UInt64? {
        guard key.count == 8 else { return nil }
        return key.reduce(0) { $0 << 8 | UInt64($1) }
    }
}

/// The page sizes of long listings (`limit` of `list`, `events` and `deadLetters`).
public enum PageSize {
    /// Items per page when a request gives no `limit`.
    public static let `default` = 250
    /// The largest `limit` a request may ask for; larger ones are refused (`invalid_argument`).
    public static let maximum = 10_000

    /// Checks a requested `limit`.
    /// - Returns: the limit, or ``default`` when none was given.
    /// - Throws: `WireError` `.invalidArgument` (field `limit`) outside 1…``maximum``.
    public static func checked(_ limit: Int?) throws(WireError) -> Int {
        guard let limit else { return `default` }
        guard (1...maximum).contains(limit) else {
            throw WireError(.invalidArgument, "limit must be from 1 to \(maximum), not \(limit)", field: "limit")
        }
        return limit
    }
}
