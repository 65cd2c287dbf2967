import Foundation

/// A value of a reminder's `userInfo`: the JSON form of the property-list types
/// (string, integer, real, boolean, array, dictionary). `null` is not a property-list value
/// and is rejected when decoding, as `UILocalNotification.userInfo` throws on
/// non-property-list types.
public enum PropertyListValue: Hashable, Sendable, Codable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case boolean(Bool)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "null is not a property-list value")
        }
        if let value = try? container.decode(Bool.self) {
            self = .boolean(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .real(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([PropertyListValue].self) {
            self = .array(value)
        } else {
            self = .dictionary(try container.decode([String: PropertyListValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .real(let value): try container.encode(value)
        case .boolean(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .dictionary(let value): try container.encode(value)
        }
    }

    /// The value as `key=value` matching text: strings as they are, numbers and booleans in
    /// their JSON spelling; `nil` for arrays and dictionaries, which never match.
    public var matchText: String? {
        switch self {
        case .string(let value): return value
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .boolean(let value): return value ? "true" : "false"
        case .array, .dictionary: return nil
        }
    }

    /// The nesting depth: 1 for a scalar, 1 + the deepest element for containers.
    public var depth: Int {
        switch self {
        case .array(let values): return 1 + (values.map(\.depth).max() ?? 0)
        case .dictionary(let values): return 1 + (values.values.map(\.depth).max() ?? 0)
        default: return 1
        }
    }
}
