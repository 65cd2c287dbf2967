import ChimeCore
import Foundation

extension ControlRequest {
    /// Decodes the common shapes of a request without `JSONDecoder`, or returns `nil`.
    ///
    /// Covered: `schedule` with `"reminders": [...]` or `"reminder": {...}` (every field of
    /// `Reminder`, `Content`, `Trigger` and `NagPolicy`, any `userInfo`), `ping`, `status`, and
    /// `cancel` by `ids`, `recipient`, `match` or `"all": true`; `requestId` with each. When it
    /// returns a request, that request equals what `JSONDecoder` decodes from the same bytes.
    /// It returns `nil`, never traps, for anything else: malformed JSON, a trailing comma, a
    /// byte order mark, other ops, keys the op does not take or that appear twice, wrong
    /// types, values the models' parsers refuse, numbers it cannot convert exactly as
    /// `JSONDecoder` does, nesting deeper than 64. ``WireCodec/decodeRequest(_:)`` then runs
    /// `JSONDecoder`, which decides and words any error.
    public init?(fastJSON data: Data) {
        let request = data.withUnsafeBytes { raw -> ControlRequest? in
            var reader = FastJSONReader(raw.assumingMemoryBound(to: UInt8.self))
            // Unsupported carries nothing: the caller's fallback words the error.
            return try? ControlRequest(fastJSON: &reader)
        }
        guard let request else { return nil }
        self = request
    }

    private init(fastJSON reader: inout FastJSONReader) throws(FastJSONReader.Unsupported) {
        var operationName: String?
        var requestId: String??
        var reminders: [Reminder]??
        var reminder: Reminder??
        var ids: [ReminderID]??
        var recipient: RecipientID??
        var match: [String: String]??
        var all: Bool??
        var object = try reader.beginObject()
        // Every key is parsed here; which ones the op takes is checked below, as
        // `ControlOperation.argumentKeys` says (`init(from:)` refuses the others).
        while let key = try reader.nextKey(in: &object) {
            switch key {
            case "op": try operationName.setOnce(reader.readString())
            case "requestId": try requestId.setOnce(reader.readStringOrNull())
            case "reminders": try reminders.setOnce(Self.readReminders(&reader))
            case "reminder": try reminder.setOnce(reader.consumeNull() ? nil : Reminder(fastJSON: &reader))
            case "ids": try ids.setOnce(Self.readIDs(&reader))
            case "recipient": try recipient.setOnce(reader.readStringOrNull().map(RecipientID.init(rawValue:)))
            case "match": try match.setOnce(Self.readMatch(&reader))
            case "all": try all.setOnce(reader.consumeNull() ? nil : reader.readBool())
            default: throw FastJSONReader.Unsupported()
            }
        }
        try reader.finish()
        guard let operationName, let operation = ControlOperation(rawValue: operationName) else {
            throw FastJSONReader.Unsupported()
        }
        let hasScheduleKeys = reminders != nil || reminder != nil
        let hasFilterKeys = ids != nil || recipient != nil || match != nil || all != nil
        let command: Command
        switch operation {
        case .schedule:
            guard !hasFilterKeys else { throw FastJSONReader.Unsupported() }
            if let many = reminders ?? nil {
                command = .schedule(many)
            } else if let one = reminder ?? nil {
                command = .schedule([one])
            } else {
                throw FastJSONReader.Unsupported()
            }
        case .cancel:
            guard !hasScheduleKeys else { throw FastJSONReader.Unsupported() }
            let filter = ReminderFilter(ids: ids ?? nil, recipient: recipient ?? nil, match: match ?? nil)
            guard !filter.isEmpty || (all ?? nil) == true else { throw FastJSONReader.Unsupported() }
            command = .cancel(filter)
        case .ping, .status:
            guard !hasScheduleKeys && !hasFilterKeys else { throw FastJSONReader.Unsupported() }
            command = operation == .ping ? .ping : .status
        default:
            throw FastJSONReader.Unsupported()
        }
        self.init(requestId: requestId ?? nil, command: command)
    }

    private static func readReminders(_ reader: inout FastJSONReader) throws(FastJSONReader.Unsupported)
        -> [Reminder]?
    {
        if try reader.consumeNull() { return nil }
        var reminders: [Reminder] = []
        var array = try reader.beginArray()
        while try reader.nextElement(in: &array) {
            reminders.append(try Reminder(fastJSON: &reader))
        }
        return reminders
    }

    private static func readIDs(_ reader: inout FastJSONReader) throws(FastJSONReader.Unsupported) -> [ReminderID]? {
        if try reader.consumeNull() { return nil }
        var ids: [ReminderID] = []
        var array = try reader.beginArray()
        while try reader.nextElement(in: &array) {
            ids.append(ReminderID(rawValue: try reader.readString()))
        }
        return ids
    }

    private static func readMatch(_ reader: inout FastJSONReader) throws(FastJSONReader.Unsupported)
        -> [String: String]?
    {
        if try reader.consumeNull() { return nil }
        var match: [String: String] = [:]
        var object = try reader.beginObject()
        while let key = try reader.nextStringKey(in: &object) {
            let value = try reader.readString()
            guard match.updateValue(value, forKey: key) == nil else { throw FastJSONReader.Unsupported() }
        }
        return match
    }
}
