import ChimeCore
import Foundation

/// A JSON value for the providers' payloads, encoded with sorted keys and unescaped slashes
/// so a payload is the same bytes every time (tests compare them exactly).
enum PushJSON: Encodable, Hashable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case array([PushJSON])
    case object([String: PushJSON])

    /// `value` as JSON (property-list types map one to one).
    init(_ value: PropertyListValue) {
        switch value {
        case .string(let text): self = .string(text)
        case .integer(let number): self = .integer(number)
        case .real(let number): self = .real(number)
        case .boolean(let flag): self = .bool(flag)
        case .array(let items): self = .array(items.map(PushJSON.init))
        case .dictionary(let entries): self = .object(entries.mapValues(PushJSON.init))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .integer(let number): try container.encode(number)
        case .real(let number): try container.encode(number)
        case .bool(let flag): try container.encode(flag)
        case .array(let items): try container.encode(items)
        case .object(let entries): try container.encode(entries)
        }
    }

    /// The value's bytes: sorted keys, `/` unescaped.
    var data: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Only a non-finite real fails to encode; property lists from JSON hold none, and one
        // that did is sent as null rather than trapping.
        return (try? encoder.encode(self)) ?? Data("null".utf8)
    }

    /// The value as text: strings as they are, everything else as its JSON (FCM's `data`
    /// map takes strings only).
    var text: String {
        if case .string(let text) = self { return text }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A bounded excerpt of a response body for a dead letter's reason: at most `limit` bytes of
/// UTF-8, whitespace collapsed.
func responseExcerpt(_ body: Data, limit: Int = 200) -> String {
    let text = String(decoding: body.prefix(limit), as: UTF8.self)
    return text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
}
