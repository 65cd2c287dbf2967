import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A stand-in for APNs and FCM: `Tests/interop/push_provider_standin.py` run as a child
/// process, serving HTTP/2 over TLS on a free loopback port with a self-signed certificate
/// (see the script for what it checks and answers). It verifies the JWTs with pyjwt (ES256
/// for APNs, RS256 for FCM's token endpoint), so it needs `python3` with `pyjwt[crypto]`,
/// `hypercorn` and `h2` (``isAvailable``).
///
/// The child is stopped by its PID at ``stop()`` or deinit (SIGTERM, then SIGKILL after 2 s),
/// and exits by itself when this process goes away (its stdin closes).
public final class PushProviderStandIn {
    /// The script.
    public static let scriptURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/interop/push_provider_standin.py")

    /// Whether `python3` imports what the script needs.
    public static let isAvailable: Bool = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import jwt, cryptography, hypercorn, h2"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    /// The port it listens on, 127.0.0.1.
    public let port: Int
    /// The PEM certificate to trust (its own, self-signed, for 127.0.0.1).
    public let certificateFile: String
    /// `https://127.0.0.1:<port>`.
    public var baseURL: String { "https://127.0.0.1:\(port)" }

    private let process: Process
    private let stdin: Pipe
    private let logFile: String

    /// Starts the stand-in, writing its certificate into `directory`, and waits (at most
    /// `timeout` seconds) for it to listen.
    /// - Parameters:
    ///   - apnsKey, keyID, teamID: the `.p8` whose public half verifies provider tokens, and
    ///     the `kid` and `iss` they must carry.
    ///   - googleKey, clientEmail: the service account's private key file and `client_email`.
    /// - Throws: `StandInError` when it exits or says nothing within `timeout`.
    public init(
        directory: URL, apnsKey: String, keyID: String, teamID: String, googleKey: String, clientEmail: String, timeout: Double = 20
    ) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", Self.scriptURL.path, "--dir", directory.path, "--apns-key", apnsKey, "--key-id", keyID, "--team-id", teamID,
            "--google-key", googleKey, "--client-email", clientEmail,
        ]
        logFile = directory.appendingPathComponent("standin.log").path
        _ = FileManager.default.createFile(atPath: logFile, contents: nil)
        stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle(forWritingAtPath: logFile)
        try process.run()
        let firstLine = DispatchSemaphore(value: 0)
        let line = LockedText()
        let reader = stdout.fileHandleForReading
        DispatchQueue.global().async {
            var bytes = Data()
            while !bytes.contains(UInt8(ascii: "\n")) {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                bytes.append(chunk)
            }
            line.set(String(decoding: bytes, as: UTF8.self))
            firstLine.signal()
        }
        certificateFile = directory.appendingPathComponent("cert.pem").path
        guard firstLine.wait(timeout: .now() + timeout) == .success,
            let text = line.get().split(separator: "\n").first, text.hasPrefix("port "), let port = Int(text.dropFirst(5))
        else {
            Self.stop(process)
            let log = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
            throw StandInError(message: "the push provider stand-in did not start within \(timeout) s: \(log)")
        }
        self.port = port
    }

    /// What the stand-in wrote to stderr (hypercorn's log and any traceback).
    public var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// Stops the child (SIGTERM, SIGKILL after 2 s) and reaps it.
    public func stop() { Self.stop(process) }

    deinit { Self.stop(process) }

    private static func stop(_ process: Process) {
        guard process.isRunning else { return }
        let pid = process.processIdentifier
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Why the stand-in could not be used.
public struct StandInError: Error, CustomStringConvertible {
    /// What happened.
    public var message: String
    /// The message.
    public var description: String { message }
}

/// A string shared with the reader thread.
private final class LockedText: Sendable {
    private let text = Mutex("")
    func set(_ value: String) { text.withLock { $0 = value } }
    func get() -> String { text.withLock { $0 } }
}
