import ChimeCommandLine
import ChimeCore

extension ScheduleCommand {
    /// `--interruption-level`, or `.active` when absent.
    /// - Throws: `UsageError` for a name that is not a level.
    static func interruptionLevel(_ arguments: Arguments) throws(UsageError) -> InterruptionLevel {
        try named("interruption-level", in: arguments, absent: .active)
    }

    /// `--unhandled`, or `.stack` when absent.
    /// - Throws: `UsageError` for a name that is not a policy.
    static func unhandledPolicy(_ arguments: Arguments) throws(UsageError) -> UnhandledPolicy {
        try named("unhandled", in: arguments, absent: .stack)
    }

    /// `--throttled`, or `.hold` when absent.
    /// - Throws: `UsageError` for a name that is not a policy.
    static func throttledPolicy(_ arguments: Arguments) throws(UsageError) -> ThrottledPolicy {
        try named("throttled", in: arguments, absent: .hold)
    }

    /// `--relevance-score`, a number from 0 to 1 inclusive, or `nil` when absent.
    /// - Throws: `UsageError` for text that is not such a number.
    static func relevanceScore(_ arguments: Arguments) throws(UsageError) -> Double? {
        try unitInterval("relevance-score", in: arguments)
    }

    /// `--sound-volume`, a number from 0 to 1 inclusive, or `nil` when absent.
    /// - Throws: `UsageError` for text that is not such a number.
    static func soundVolume(_ arguments: Arguments) throws(UsageError) -> Double? {
        try unitInterval("sound-volume", in: arguments)
    }

    /// The value of `--flag` as one of `Value`'s names, or `absent` when not given.
    /// - Throws: `UsageError` naming the flag and every name it takes.
    private static func named<Value: RawRepresentable<String> & CaseIterable>(
        _ flag: String, in arguments: Arguments, absent: Value
    ) throws(UsageError) -> Value {
        guard let name = arguments.value(flag) else { return absent }
        guard let value = Value(rawValue: name) else {
            let names = Value.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError("--\(flag) must be one of \(names), not '\(name)'")
        }
        return value
    }

    /// The value of `--flag` as a number from 0 to 1 inclusive, or `nil` when not given.
    /// - Throws: `UsageError` naming the flag for text that is not such a number.
    private static func unitInterval(_ flag: String, in arguments: Arguments) throws(UsageError) -> Double? {
        guard let text = arguments.value(flag) else { return nil }
        guard let number = Double(text), (0...1).contains(number) else {
            throw UsageError("--\(flag) must be a number from 0 to 1, not '\(text)'")
        }
        return number
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
