import ChimeCommandLine
import ChimeCore

extension ScheduleCommand {
    /// `--interruption-level`, or `.active` when absent.
    /// - Throws: `UsageError` for a name that is not a level.
    static func interruptionLevel(_ arguments: Arguments) throws(UsageError) -> InterruptionLevel {
        guard let name = arguments.value("interruption-level") else { return .active }
        guard let level = InterruptionLevel(rawValue: name) else {
            let names = InterruptionLevel.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError("--interruption-level must be one of \(names), not '\(name)'")
        }
        return level
    }

    /// `--unhandled`, or `.stack` when absent.
    /// - Throws: `UsageError` for a name that is not a policy.
    static func unhandledPolicy(_ arguments: Arguments) throws(UsageError) -> UnhandledPolicy {
        guard let name = arguments.value("unhandled") else { return .stack }
        guard let policy = UnhandledPolicy(rawValue: name) else {
            throw UsageError("--unhandled must be stack, replace or skip, not '\(name)'")
        }
        return policy
    }

    /// `--relevance-score`, a number from 0 to 1 inclusive, or `nil` when absent.
    /// - Throws: `UsageError` for text that is not such a number.
    static func relevanceScore(_ arguments: Arguments) throws(UsageError) -> Double? {
        guard let text = arguments.value("relevance-score") else { return nil }
        guard let score = Double(text), (0...1).contains(score) else {
            throw UsageError("--relevance-score must be a number from 0 to 1, not '\(text)'")
        }
        return score
    }

    /// `--throttled`, or `.hold` when absent.
    /// - Throws: `UsageError` for a name that is no policy.
    static func throttledPolicy(_ arguments: Arguments) throws(UsageError) -> ThrottledPolicy {
        guard let name = arguments.value("throttled") else { return .hold }
        guard let policy = ThrottledPolicy(rawValue: name) else {
            throw UsageError("--throttled must be hold, coalesce or drop, not '\(name)'")
        }
        return policy
    }

    /// `--sound-volume`, a number from 0 to 1 inclusive, or `nil` when absent.
    /// - Throws: `UsageError` for text that is not such a number.
    static func soundVolume(_ arguments: Arguments) throws(UsageError) -> Double? {
        guard let text = arguments.value("sound-volume") else { return nil }
        guard let volume = Double(text), (0...1).contains(volume) else {
            throw UsageError("--sound-volume must be a number from 0 to 1, not '\(text)'")
        }
        return volume
    }

    /// Every `--attachment ID,URL,TYPE,SIZE`, or `nil` when none: the identifier runs to the
    /// first comma, the type and size are the last two fields, and the URL is what lies
    /// between (so it may hold commas).
    /// - Throws: `UsageError` for a value with fewer than four fields or a size that is not a
    ///   whole number. The coordinator checks the rest (types, limits, URLs).
    static func attachments(_ arguments: Arguments) throws(UsageError) -> [NotificationAttachment]? {
        let values = arguments.all("attachment")
        guard !values.isEmpty else { return nil }
        var list: [NotificationAttachment] = []
        for value in values {
            guard let first = value.firstIndex(of: ","), let last = value.lastIndex(of: ","), first < last else {
                throw UsageError("--attachment must be ID,URL,TYPE,SIZE, not '\(value)'")
            }
            let identifier = String(value[..<first])
            let middle = value[value.index(after: first)..<last]
            guard let typeComma = middle.lastIndex(of: ",") else {
                throw UsageError("--attachment must be ID,URL,TYPE,SIZE, not '\(value)'")
            }
            let url = String(middle[..<typeComma])
            let type = String(middle[middle.index(after: typeComma)...])
            let sizeText = value[value.index(after: last)...]
            guard let size = Int(sizeText) else {
                throw UsageError("--attachment's SIZE must be a whole number of bytes, not '\(sizeText)'")
            }
            list.append(NotificationAttachment(identifier: identifier, url: url, type: type, size: size))
        }
        return list
    }
}
