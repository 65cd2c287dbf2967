import Foundation

/// What breaks through a recipient's quiet hours besides the `timeSensitive` and `critical`
/// levels: Apple's Focus lets chosen apps and people through, and a Focus filter lets
/// notifications whose `filterCriteria` it names through (`UNNotificationContent
/// .filterCriteria`, iOS 16). A passive or active firing whose `content.category` is in
/// `categories`, or whose `content.filterCriteria` is in `filterCriteria`, is delivered in a
/// quiet window instead of held; summaries and throttles still apply to it.
///
/// JSON shape (the recipient's `"breakThrough"`): `{"categories": ["alarm"],
/// "filterCriteria": ["work"]}`; either list may be absent (empty). At most
/// ``maximumCount`` entries each, of 1 to 256 UTF-8 bytes.
public struct QuietHoursBreakThrough: Hashable, Sendable {
    /// Category identifiers whose firings break through.
    public var categories: [String]
    /// `filterCriteria` values whose firings break through.
    public var filterCriteria: [String]

    /// The most entries each list may have.
    public static let maximumCount = 100
    /// The longest entry, in UTF-8 bytes.
    public static let maximumLength = 256

    /// Creates the value; not checked, see ``validate()``.
    public init(categories: [String] = [], filterCriteria: [String] = []) {
        self.categories = categories
        self.filterCriteria = filterCriteria
    }

    /// Whether nothing breaks through (both lists empty).
    public var isEmpty: Bool { categories.isEmpty && filterCriteria.isEmpty }

    /// Whether a firing of `content` breaks through: its category or its filter criteria is
    /// listed. O(entries).
    public func lets(_ content: Content) -> Bool {
        if let category = content.category, categories.contains(category) { return true }
        if let criteria = content.filterCriteria, filterCriteria.contains(criteria) { return true }
        return false
    }

    /// Checks the counts and the entries.
    /// - Throws: `ValidationError` `.invalidArgument` naming `breakThrough.categories[i]` or
    ///   `breakThrough.filterCriteria[i]` (or the list, when too long).
    public func validate() throws(ValidationError) {
        for (name, list) in [("categories", categories), ("filterCriteria", filterCriteria)] {
            guard list.count <= Self.maximumCount else {
                throw ValidationError(
                    .invalidArgument, field: "breakThrough.\(name)", "has \(list.count) entries; at most \(Self.maximumCount) are allowed")
            }
            for (index, entry) in list.enumerated() where entry.isEmpty || entry.utf8.count > Self.maximumLength {
                throw ValidationError(
                    .invalidArgument, field: "breakThrough.\(name)[\(index)]", "must be 1 to \(Self.maximumLength) bytes, not \(entry.utf8.count)")
            }
        }
    }
}

extension QuietHoursBreakThrough: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case categories, filterCriteria
    }

    /// Decodes the JSON shape above; each list is counted before its entries are decoded.
    /// - Throws: `DecodingError` for a malformed field, a list longer than ``maximumCount``,
    ///   or an unknown key.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func list(_ key: CodingKeys) throws -> [String] {
            guard container.contains(key), try !container.decodeNil(forKey: key) else { return [] }
            let nested = try container.nestedUnkeyedContainer(forKey: key)
            if let count = nested.count, count > Self.maximumCount {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "at most \(Self.maximumCount) entries, not \(count)")
            }
            return try container.decode([String].self, forKey: key)
        }
        categories = try list(.categories)
        filterCriteria = try list(.filterCriteria)
    }

    /// Encodes the JSON shape above, empty lists omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !categories.isEmpty { try container.encode(categories, forKey: .categories) }
        if !filterCriteria.isEmpty { try container.encode(filterCriteria, forKey: .filterCriteria) }
    }
}
