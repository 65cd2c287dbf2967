import Foundation
import Testing

@testable import ChimeCore

/// Encodes `value` as the wire does: sorted keys, unescaped slashes, instants as RFC 3339
/// UTC text with milliseconds.
func wireJSON(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(RFC3339.format(date))
    }
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

/// Decodes `json` as the wire does (instants as RFC 3339 text).
func decodeWire<Value: Decodable>(_ type: Value.Type, _ json: String) throws -> Value {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .custom { decoder in
        try RFC3339.parseInstant(try decoder.singleValueContainer().decode(String.self))
    }
    return try decoder.decode(type, from: Data(json.utf8))
}

/// Runs `body`, expecting a `ValidationError`, and returns it for checks of its field and message.
func expectValidationError(
    _ code: ValidationError.Code, field: String?, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> ValidationError? {
    do {
        try body()
        Issue.record("expected a ValidationError \(code)", sourceLocation: sourceLocation)
        return nil
    } catch {
        guard let error = error as? ValidationError else {
            Issue.record("expected a ValidationError, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(error.code == code, sourceLocation: sourceLocation)
        #expect(error.field == field, sourceLocation: sourceLocation)
        return error
    }
}
