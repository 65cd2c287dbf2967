import ChimeRuntime
import ChimeWire
import Foundation
import ChimeSecurity

/// A runtime failure raised by the CLI itself (not a usage mistake): exit status 1.
struct RuntimeFailure: Error, CustomStringConvertible {
    /// A stable code in the wire's spelling (`failed`, `timeout`).
    var code: String
    var message: String
    init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }

    init(_ message: String) { self.init("failed", message) }
    var description: String { message }
}

/// Any error a command throws, as the CLI contract reports it: exit 2 for usage errors and
/// 1 for everything else; a stable `code`, one sentence, and the field at fault if any.
struct CommandFailure {
    var code: String
    var message: String
    var field: String?
    var exitStatus: Int32

    /// The hint added to `unavailable` errors: the usual cause is no coordinator running.
    static let unavailableHint = "is a coordinator running? start one with 'chime up'"

    init(_ error: any Error) {
        exitStatus = 1
        switch error {
        case let error as UsageError:
            (code, message, exitStatus) = ("usage", error.message, 2)
        case let error as WireError:
            (code, message, field) = (error.code.rawValue, error.message, error.field)
            if error.code == .unavailable { message += "; \(Self.unavailableHint)" }
        case let error as ConfigurationError:
            (code, message) = ("configuration", error.message)
        case let error as SecurityError:
            (code, message) = ("security", error.description)
        case let error as RuntimeFailure:
            (code, message) = (error.code, error.message)
        default:
            (code, message) = ("failed", "\(error)")
        }
    }

    /// `unavailable: …` as the one stderr line reads (usage errors have no code prefix).
    var humanMessage: String {
        switch code {
        case "usage", "configuration", "security", "failed": return message
        default: return "\(code): \(field.map { "\($0): " } ?? "")\(message)"
        }
    }

    /// `{"ok":false,"error":{"code":…,"message":…,"field":…}}` on one line.
    var jsonDocument: String {
        var error: [String: Any] = ["code": code, "message": message]
        if let field { error["field"] = field }
        return jsonLine(["ok": false, "error": error])
    }
}
