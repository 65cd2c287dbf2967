import ChimeCore
import ChimeWire
import ChimeCommandLine
import Foundation

/// Reads reminders from a JSON array or from newline-delimited JSON, one object at a time,
/// turning `"trigger": {"in": "5s"}` into an absolute `at`.
enum ReminderFile {
    /// One object of the file: its wire JSON (after the `in` rewrite; the coordinator
    /// validates it), or why it cannot be used.
    typealias Item = Result<Data, WireError>

    /// Calls `body` with each object's 0-based index, the item and the share of the file read
    /// so far (`nil` for stdin), reading 1 MiB at a time.
    /// - Throws: `UsageError` when the file cannot be read or is not an array of objects or
    ///   NDJSON; what `body` throws.
    static func forEach(path: String, now: Date, _ body: (Int, Item, Double?) throws -> Void) throws {
        let handle: FileHandle
        var size: Double?
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            guard let opened = FileHandle(forReadingAtPath: path) else { throw UsageError("cannot read \(path)") }
            handle = opened
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            size = (attributes?[.size] as? NSNumber)?.doubleValue
        }
        defer { if path != "-" { try? handle.close() } }
        var splitter = JSONObjectSplitter()
        var index = 0
        var read = 0.0
        do {
            while true {
                let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
                if chunk.isEmpty { break }
                read += Double(chunk.count)
                let fraction = size.map { $0 > 0 ? min(1, read / $0) : 1 }
                for object in try splitter.feed(chunk) {
                    try body(index, item(object, index: index, now: now), fraction)
                    index += 1
                }
            }
            try splitter.finish()
        } catch let error as WireError {
            throw UsageError("\(path): \(error.message)")
        }
    }

    /// Every reminder of the file (for the few of `sampleReminders`).
    /// - Throws: `UsageError` for the first unusable item, naming its index.
    static func load(path: String, now: Date) throws -> [Reminder] {
        var reminders: [Reminder] = []
        try forEach(path: path, now: now) { index, item, _ in
            do throws(WireError) {
                reminders.append(try WireCodec().decode(Reminder.self, from: try item.get()))
            } catch {
                throw UsageError("\(path): item \(index): \(error.field.map { "\($0): " } ?? "")\(error.message)")
            }
        }
        return reminders
    }

    /// One object with a relative `trigger.in` rewritten; only objects that may hold `"in"`
    /// pay for the rewrite's parse.
    static func item(_ object: Data, index: Int, now: Date) -> Item {
        guard object.range(of: Data(#""in""#.utf8)) != nil else { return .success(object) }
        do {
            return .success(try rewritingRelativeTime(object, now: now))
        } catch {
            return .failure(error)
        }
    }

    /// The object with `trigger.in` (a duration from `now`) replaced by `trigger.at`.
    /// - Throws: `WireError` `.invalidArgument` for a bad duration or zone.
    static func rewritingRelativeTime(_ object: Data, now: Date) throws(WireError) -> Data {
        // The strict reading first, as the coordinator's: `JSONSerialization` keeps the last of
        // two equal keys, and the rewrite would send one of them without a word.
        try StrictJSON.check(object)
        guard var reminder = (try? JSONSerialization.jsonObject(with: object)) as? [String: Any],
            var trigger = reminder["trigger"] as? [String: Any], let relativeTime = trigger["in"]
        else { return object }
        guard let text = relativeTime as? String else {
            throw WireError(.invalidArgument, "must be a duration string such as \"5s\"", field: "trigger.in")
        }
        let instant: Date
        do {
            instant = now.addingTimeInterval(try DurationParser.parseSeconds(text))
        } catch {
            throw WireError(.invalidArgument, error.message, field: "trigger.in")
        }
        // Formatting would clamp a later instant to 9999-12-31: a different reminder, so refused.
        guard instant <= RFC3339.supportedInstants.upperBound else {
            throw WireError(
                .invalidArgument, "'\(text)' from now is after 9999-12-31T23:59:59.999Z, the latest instant", field: "trigger.in")
        }
        trigger["in"] = nil
        if let zone = trigger["timeZone"] as? String {
            do {
                trigger["at"] = ZoneRules.localDateTime(at: instant, in: try ZoneRules.zone(named: zone)).description
            } catch {
                throw WireError(.unknownTimeZone, error.message, field: "trigger.timeZone")
            }
        } else {
            trigger["at"] = RFC3339.format(instant)
        }
        reminder["trigger"] = trigger
        guard let data = try? JSONSerialization.data(withJSONObject: reminder) else {
            throw WireError(.invalidArgument, "the reminder cannot be written back as JSON")
        }
        return data
    }
}
