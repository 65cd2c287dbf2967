import ChimeWire
import Foundation

/// One input item that was not scheduled: its 0-based index in the input and why.
struct ItemFailure {
    var index: Int
    var id: String?
    var error: WireError

    /// `item 12 (id standup): invalid_argument: trigger.at: …`.
    var line: String {
        "item \(index)\(id.map { " (id \($0))" } ?? ""): \(error.code): \(error.field.map { "\($0): " } ?? "")\(error.message)"
    }

    var object: [String: Any] {
        var object: [String: Any] = ["index": index, "code": error.code.rawValue, "message": error.message]
        if let id { object["id"] = id }
        if let field = error.field { object["field"] = field }
        return object
    }
}
