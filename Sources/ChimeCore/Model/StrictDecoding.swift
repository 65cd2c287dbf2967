import Foundation

/// A JSON object carried a key its type does not know (wire code `unknown_field`).
///
/// Thrown as the `underlyingError` of a `DecodingError.dataCorrupted` whose coding path ends
/// with the unknown key, so the path names where it is (`reminders[3].contents`).
public struct UnknownFieldError: Error, Hashable, Sendable {
    /// The key as it was spelled.
    public var key: String
    /// A known key (or a dotted path to one elsewhere) the caller probably meant, if any.
    public var suggestion: String?

    /// One sentence: `unknown field "contents"; did you mean "content"?`.
    public var message: String {
        guard let suggestion else { return "unknown field \"\(key)\"" }
        return "unknown field \"\(key)\"; did you mean \"\(suggestion)\"?"
    }

    /// The closest of `candidates` to `key`: equal but for case, or at most two edits away
    /// (Levenshtein) and fewer than half the candidate's length; ties go to the earlier
    /// candidate. `nil` when none is that close.
    public static func closest(to key: String, among candidates: [String]) -> String? {
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = candidate.lowercased() == key.lowercased() ? 0 : editDistance(key, candidate)
            guard distance <= 2, distance * 2 < candidate.count else { continue }
            if distance < best?.distance ?? .max { best = (candidate, distance) }
        }
        return best?.candidate
    }

    /// The Levenshtein distance between two strings, by Unicode scalar.
    static func editDistance(_ left: String, _ right: String) -> Int {
        let a = Array(left.unicodeScalars)
        let b = Array(right.unicodeScalars)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}

/// Any key of a JSON object, to see the keys a typed container would not list.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

extension Decoder {
    /// Throws for the first key (in sorted order) of the object being decoded that `Keys`
    /// does not list, so a misspelt or misplaced field is refused instead of ignored.
    ///
    /// - Parameters:
    ///   - keys: the type's coding keys.
    ///   - elsewhere: where keys that belong to another object live, by key: a `before` on a
    ///     reminder suggests `trigger.before`.
    /// - Throws: `DecodingError.dataCorrupted` at the unknown key's path, whose
    ///   `underlyingError` is ``UnknownFieldError`` (with a suggestion when one is close).
    public func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(
        _ keys: Keys.Type, elsewhere: [String: String] = [:]
    ) throws {
        try rejectUnknownKeys(allowing: Keys.allCases.map(\.stringValue), elsewhere: elsewhere)
    }

    /// ``rejectUnknownKeys(_:elsewhere:)`` with the allowed keys as strings.
    /// - Throws: `DecodingError.dataCorrupted` with an ``UnknownFieldError``.
    public func rejectUnknownKeys(allowing allowed: [String], elsewhere: [String: String] = [:]) throws {
        let container = try container(keyedBy: AnyCodingKey.self)
        let unknown = container.allKeys.filter { !allowed.contains($0.stringValue) }
        guard let first = unknown.min(by: { $0.stringValue < $1.stringValue }) else { return }
        let suggestion = UnknownFieldError.closest(to: first.stringValue, among: allowed)
            ?? elsewhere[first.stringValue]
        let error = UnknownFieldError(key: first.stringValue, suggestion: suggestion)
        throw DecodingError.dataCorrupted(
            DecodingError.Context(codingPath: codingPath + [first], debugDescription: error.message, underlyingError: error))
    }
}

extension KeyedDecodingContainer {
    /// `decodeIfPresent` for a number field, whose failure names the field.
    ///
    /// `JSONDecoder` reports a number that does not fit the type (`1.5` or `1e30` for an
    /// `Int`) as invalid JSON with an empty coding path; this rethrows it at `key`.
    /// - Parameter expected: what the field takes, for the message ("a whole number").
    /// - Throws: `DecodingError` as `decodeIfPresent`, with the path of `key`.
    public func decodeNumberIfPresent<Value: Decodable>(_ type: Value.Type, forKey key: Key, expected: String) throws
        -> Value?
    {
        do {
            return try decodeIfPresent(type, forKey: key)
        } catch {
            throw numberError(error, forKey: key, expected: expected)
        }
    }

    /// ``decodeNumberIfPresent(_:forKey:expected:)`` for a required field.
    /// - Throws: `DecodingError` as `decode`, a number that does not fit at the path of `key`.
    public func decodeNumber<Value: Decodable>(_ type: Value.Type, forKey key: Key, expected: String) throws -> Value {
        do {
            return try decode(type, forKey: key)
        } catch {
            throw numberError(error, forKey: key, expected: expected)
        }
    }

    /// `error` as is when it already names a field; a pathless one (or `JSONDecoder`'s
    /// internal parse error, which it words only at the top) as `dataCorrupted` at `key`.
    private func numberError(_ error: any Error, forKey key: Key, expected: String) -> any Error {
        if let error = error as? DecodingError {
            guard case .dataCorrupted(let context) = error, context.codingPath.last?.stringValue != key.stringValue
            else { return error }
        }
        return DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "must be \(expected)")
    }
}
