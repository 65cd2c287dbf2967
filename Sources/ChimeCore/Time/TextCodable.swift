/// A value whose `Codable` form is a JSON string: its `description` when encoding, read
/// back with `init(parsing:)` (`LocalDateTime`, `RecurrenceDateTime`).
public protocol TextCodable: Codable, CustomStringConvertible {
    /// Parses the text form that `description` writes.
    /// - Throws: `ValidationError` naming what is wrong with `text`.
    init(parsing text: String) throws(ValidationError)
}

extension TextCodable {
    /// Decodes the string form of ``init(parsing:)``.
    /// - Throws: `DecodingError.dataCorrupted` with the parser's message.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.message)
        }
    }

    /// Encodes ``description``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
