import ChimeCore
import Foundation

/// Encodes and decodes Chime's JSON messages: instants as RFC 3339 UTC strings with
/// milliseconds, keys sorted for stable output.
///
/// Not `Sendable`: each thread owns its own codec (Foundation's coders are classes).
public struct WireCodec {
    private let encoder: JSONEncoder
    private let decoder: JSONDecoder
    /// Plain coders for `userInfo` inside binary frames (no dates there).
    let plainEncoder = JSONEncoder()
    let plainDecoder = JSONDecoder()

    /// A codec; with `legacyIdentifiers` it reads firing ids in the legacy text form
    /// (`<reminderId>@<dueAt>`) that journals and snapshots of earlier versions hold.
    public init(legacyIdentifiers: Bool = false) {
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339.format(date))
        }
        decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            do throws(ValidationError) {
                return try RFC3339.parseInstant(text)
            } catch {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: error.message)
            }
        }
        if legacyIdentifiers { decoder.userInfo[FiringID.legacyTextKey] = true }
    }

    /// Encodes `value` as compact JSON.
    public func encode<T: Encodable>(_ value: T) -> Data {
        do {
            return try encoder.encode(value)
        } catch {
            preconditionFailure("encoding \(T.self) cannot fail for Chime's own types: \(error)")
        }
    }

    /// Decodes a `T` from JSON bytes.
    /// - Throws: `WireError` `.malformed` when the bytes are not JSON, `.invalidArgument`
    ///   when a field is missing or has the wrong type (the message names the field path).
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(WireError) -> T {
        do {
            return try decoder.decode(type, from: data)
        } catch let error as DecodingError {
            throw WireError(decodingError: error)
        } catch let error as WireError {
            throw error
        } catch {
            throw WireError(.invalidArgument, "\(error)")
        }
    }

    /// Decodes a control request: its common shapes through ``ControlRequest/init?(fastJSON:)``
    /// (a schedule of 1,000 reminders several times faster), everything else through
    /// ``StrictJSON/check(_:)`` and then `JSONDecoder` exactly as ``decode(_:from:)``, so
    /// results and errors are the same.
    /// - Throws: `WireError` `.malformed` for bytes that are not strict JSON (a key given twice
    ///   in one object, a trailing comma, nesting deeper than 64), `.unknownField` for a key
    ///   no type takes, else as ``decode(_:from:)`` does.
    public func decodeRequest(_ data: Data) throws(WireError) -> ControlRequest {
        if let request = ControlRequest(fastJSON: data) { return request }
        try StrictJSON.check(data)
        return try decode(ControlRequest.self, from: data)
    }
}

extension WireError {
    /// Turns a `DecodingError` into a one-line wire error naming the field path.
    init(decodingError: DecodingError) {
        func path(_ codingPath: [any CodingKey]) -> String? {
            let parts = codingPath.map { key in key.intValue.map { "[\($0)]" } ?? key.stringValue }
            return parts.isEmpty ? nil : parts.joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
        }
        switch decodingError {
        case .dataCorrupted(let context) where context.underlyingError is UnknownFieldError:
            self.init(.unknownField, context.debugDescription, field: path(context.codingPath))
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            self.init(.malformed, "the message is not valid JSON")
        case .dataCorrupted(let context):
            let field = path(context.codingPath)
            if context.debugDescription.contains("time zone") || field?.hasSuffix("timeZone") == true {
                self.init(.unknownTimeZone, context.debugDescription, field: field)
            } else {
                self.init(.invalidArgument, context.debugDescription, field: field)
            }
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath + [key])
            self.init(.invalidArgument, "the field \(field ?? key.stringValue) is required", field: field)
        case .typeMismatch(let type, let context):
            let field = path(context.codingPath)
            self.init(.invalidArgument, "\(field ?? "the value") must be \(Self.jsonTypeName(type))", field: field)
        case .valueNotFound(let type, let context):
            let field = path(context.codingPath)
            self.init(.invalidArgument, "\(field ?? "the value") must be \(Self.jsonTypeName(type)), not null", field: field)
        @unknown default:
            self.init(.invalidArgument, "\(decodingError)")
        }
    }

    private static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "a boolean"
        case is Int.Type, is Int64.Type, is Double.Type: return "a number"
        case is [Any].Type: return "an array"
        default: return "a JSON object"
        }
    }
}
