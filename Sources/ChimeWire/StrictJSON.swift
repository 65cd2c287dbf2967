import Foundation

/// The strict reading of RFC 8259 that every control request must pass before
/// `JSONDecoder` sees it: `JSONDecoder` keeps the first of two equal keys (so
/// `{"op":"cancel","op":"ping","all":true}` cancelled everything, while Python reads a ping)
/// and accepts a trailing comma.
///
/// Refused: anything that is not one JSON value with only whitespace around it; a trailing
/// comma; a key given twice in one object (compared after unescaping); a lone surrogate
/// escape; invalid UTF-8; nesting deeper than ``FastJSONReader/maximumDepth`` (64).
/// Requests the fast path decodes never reach this check: that path refuses the same inputs.
public enum StrictJSON {
    /// Checks `data` and returns, or throws the first problem.
    /// - Throws: `WireError` `.malformed`; for a repeated key, `field` is the path of the
    ///   object holding it (`reminders[2].content`) and the message names the key.
    public static func check(_ data: Data) throws(WireError) {
        let outcome: Result<Void, WireError> = data.withUnsafeBytes { raw in
            var walker = Walker(reader: FastJSONReader(raw.assumingMemoryBound(to: UInt8.self)))
            do throws(Walker.Failure) {
                try walker.value()
                try walker.finish()
                return .success(())
            } catch {
                switch error {
                case .duplicateKey(let key, let path):
                    return .failure(WireError(
                        .malformed, "the key \"\(key)\" appears twice in one object", field: path.isEmpty ? nil : path))
                case .tooDeep:
                    return .failure(WireError(
                        .malformed, "the message nests objects and arrays deeper than \(FastJSONReader.maximumDepth) levels"))
                case .invalid:
                    return .failure(WireError(.malformed, "the message is not valid JSON"))
                }
            }
        }
        try outcome.get()
    }

    /// A recursive descent over the reader, keeping the path for error messages.
    private struct Walker {
        enum Failure: Error {
            case duplicateKey(String, path: String)
            case tooDeep
            case invalid
        }

        enum Component {
            case key(String)
            case index(Int)
        }

        var reader: FastJSONReader
        var path: [Component] = []

        mutating func finish() throws(Failure) {
            do { try reader.finish() } catch { throw .invalid }
        }

        mutating func value() throws(Failure) {
            do {
                switch try reader.nextValueKind() {
                case .object: try object()
                case .array: try array()
                case .string: _ = try reader.readString()
                case .number: _ = try reader.readNumber()
                case .boolean: _ = try reader.readBool()
                case .null: _ = try reader.consumeNull()
                }
            } catch let failure as Failure {
                throw failure
            } catch {
                throw .invalid
            }
        }

        private mutating func object() throws(Failure) {
            guard path.count < FastJSONReader.maximumDepth else { throw .tooDeep }
            do {
                var object = try reader.beginObject()
                var keys = Set<String>()
                while let key = try reader.nextStringKey(in: &object) {
                    guard keys.insert(key).inserted else { throw Failure.duplicateKey(key, path: renderedPath) }
                    path.append(.key(key))
                    try value()
                    path.removeLast()
                }
            } catch let failure as Failure {
                throw failure
            } catch {
                throw .invalid
            }
        }

        private mutating func array() throws(Failure) {
            guard path.count < FastJSONReader.maximumDepth else { throw .tooDeep }
            do {
                var array = try reader.beginArray()
                var index = 0
                while try reader.nextElement(in: &array) {
                    path.append(.index(index))
                    try value()
                    path.removeLast()
                    index += 1
                }
            } catch let failure as Failure {
                throw failure
            } catch {
                throw .invalid
            }
        }

        /// `reminders[2].content`: keys joined by dots, indexes in brackets.
        private var renderedPath: String {
            var text = ""
            for component in path {
                switch component {
                case .key(let key): text += text.isEmpty ? key : ".\(key)"
                case .index(let index): text += "[\(index)]"
                }
            }
            return text
        }
    }
}
