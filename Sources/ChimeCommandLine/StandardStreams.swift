import ChimeRuntime
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// Writes `chime: <message>` and a newline to standard error.
public func printError(_ message: String) {
    StandardStreams.writeError("chime: \(message)\n")
}

/// Writes one line straight to standard output (no stdio buffering, so a pipe sees each
/// event at once). Shadows `Swift.print` inside the executables.
public func output(_ text: String = "", terminator: String = "\n") {
    // SIGPIPE is ignored: a reader that went away (`chime list | head`) ends the command
    // as that signal would have, with the shell's status for it.
    if StandardStreams.write(Data((text + terminator).utf8), to: STDOUT_FILENO) == EPIPE { exit(128 + SIGPIPE) }
}

/// One JSON object as a line, keys sorted; a number JSON cannot spell (NaN, ±infinity) is
/// written as `null`.
public func jsonLine(_ object: [String: Any]) -> String {
    func spellable(_ value: Any) -> Any {
        switch value {
        case let number as Double: return number.isFinite ? number : NSNull()
        case let array as [Any]: return array.map(spellable)
        case let dictionary as [String: Any]: return dictionary.mapValues(spellable)
        default: return value
        }
    }
    let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? JSONSerialization.data(withJSONObject: spellable(object), options: options) else {
        // Only strings, numbers, booleans, arrays and dictionaries are passed in.
        return #"{"error":"a value could not be written as JSON"}"#
    }
    return String(decoding: data, as: UTF8.self)
}

/// Runs `body` and returns its exit status; a thrown error is reported as the CLI contract
/// says (``CommandFailure``: one `chime: …` line on standard error, or with `json` a JSON
/// document on standard output) and its exit status returned.
public func runReportingFailure(json: Bool, _ body: () throws -> Int32) -> Int32 {
    do {
        return try body()
    } catch {
        let failure = CommandFailure(error)
        if json {
            output(failure.jsonDocument)
        } else {
            printError(failure.humanMessage)
        }
        return failure.exitStatus
    }
}
