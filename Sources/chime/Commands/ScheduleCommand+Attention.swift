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
}
