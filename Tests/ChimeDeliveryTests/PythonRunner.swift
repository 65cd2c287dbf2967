import Foundation

/// Runs `python3` for oracles (pyjwt) and stand-ins, bounded in time.
enum PythonRunner {
    /// The repository's Tests folder.
    static let testsURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    /// A fixture under Tests/Fixtures/delivery.
    static func fixture(_ name: String) -> URL {
        testsURL.appendingPathComponent("Fixtures/delivery/\(name)")
    }

    /// Whether `python3` imports `modules`.
    static func hasModules(_ modules: String) -> Bool {
        (try? run(["-c", "import \(modules)"])) != nil
    }

    /// Whether the providers' stand-in can run: pyjwt with cryptography, hypercorn, h2.
    static let hasProviderModules = hasModules("jwt, cryptography, hypercorn, h2")

    /// Runs `python3 arguments` with `input` on stdin, killing it after `timeout` seconds.
    /// - Returns: its standard output.
    /// - Throws: `PythonFailure` when it exits non-zero (its stderr in the message) or runs over.
    static func run(_ arguments: [String], input: Data = Data(), timeout: Double = 30) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        // Read before waiting: a full pipe would otherwise block the child.
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        guard finished.wait(timeout: .now() + timeout) == .success else {
            process.terminate()
            throw PythonFailure(message: "python3 \(arguments.first ?? "") ran over \(timeout) s")
        }
        guard process.terminationStatus == 0 else {
            throw PythonFailure(message: "python3 exited \(process.terminationStatus): \(String(decoding: errors, as: UTF8.self))")
        }
        return output
    }
}

struct PythonFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
