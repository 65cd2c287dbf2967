import Foundation

/// Writes `chime: <message>` and a newline to standard error.
public func printError(_ message: String) {
    FileHandle.standardError.write(Data("chime: \(message)\n".utf8))
}

/// Writes one line straight to standard output (no stdio buffering, so a pipe sees each
/// event at once). Shadows `Swift.print` inside the executables.
public func output(_ text: String = "", terminator: String = "\n") {
    FileHandle.standardOutput.write(Data((text + terminator).utf8))
}

/// One JSON object as a line, keys sorted.
public func jsonLine(_ object: [String: Any]) -> String {
    // Only strings, numbers, arrays and dictionaries are passed in, which always serialise.
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
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
