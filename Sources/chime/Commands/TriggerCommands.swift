import ChimeClient
import ChimeCommandLine
import ChimeCore
import ChimeWire
import Foundation

/// `chime trigger now ID --recipient R`: fire a reminder once now (operators' triggers).
enum TriggerCommandLine: Command {
    static let spec = CommandSpec(
        name: "trigger",
        summary: "Fire a reminder once now without moving its schedule (operator).",
        usage: "chime trigger now ID --recipient R [--json]",
        options: [
            OptionSpec(name: "recipient", value: "R", help: "Whose reminder (ids are per recipient)."),
            jsonOption,
        ] + CommonOptions.specs)

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard arguments.positionals.count == 2, arguments.positionals[0] == "now" else {
            throw UsageError("usage: chime trigger now ID --recipient R")
        }
        let recipient = try requiredRecipient(arguments)
        let request = ControlRequest(command: .trigger(.fireNow(ReminderID(arguments.positionals[1]), recipient: recipient)))
        let (reply, raw) = try makeControlClient(arguments).call(request, TriggerNowResult.self)
        guard !arguments.has("json"), let result = reply.result else { printJSON(raw); return 0 }
        output("fired \(result.firingId)")
        return 0
    }

    static func requiredRecipient(_ arguments: Arguments) throws -> RecipientID {
        guard let recipient = arguments.value("recipient") else { throw UsageError("--recipient R is required (ids are per recipient)") }
        return RecipientID(recipient)
    }
}

/// `chime backfill ID --recipient R --from T --to T`: fire a past range's occurrences once.
enum BackfillCommand: Command {
    static let spec = CommandSpec(
        name: "backfill",
        summary: "Fire the occurrences of a past range that have not fired; a second backfill fires nothing (operator).",
        usage: "chime backfill ID --recipient R --from TIME --to TIME [--json]",
        options: [
            OptionSpec(name: "recipient", value: "R", help: "Whose reminder (ids are per recipient)."),
            OptionSpec(name: "from", value: "TIME", help: "Range start: an RFC 3339 instant (2026-12-01T00:00:00Z), inclusive."),
            OptionSpec(name: "to", value: "TIME", help: "Range end: an RFC 3339 instant, inclusive (clamped to now; at most 1,000 occurrences)."),
            jsonOption,
        ] + CommonOptions.specs)

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard arguments.positionals.count == 1 else { throw UsageError("name one reminder ID") }
        let recipient = try TriggerCommandLine.requiredRecipient(arguments)
        func instant(_ name: String) throws -> Date {
            guard let text = arguments.value(name) else { throw UsageError("--\(name) TIME is required") }
            return try Arguments.parse(text, flag: name) { text throws(ValidationError) in try RFC3339.parseInstant(text) }
        }
        let request = ControlRequest(command: .trigger(.backfill(
            ReminderID(arguments.positionals[0]), recipient: recipient, from: try instant("from"), to: try instant("to"))))
        let (reply, raw) = try makeControlClient(arguments).call(request, BackfillResult.self)
        guard !arguments.has("json"), let result = reply.result else { printJSON(raw); return 0 }
        for firingId in result.fired { output("fired \(firingId)") }
        output("\(result.fired.count) fired, \(result.alreadyFired) had fired already")
        return 0
    }
}

/// `chime remaining ID --recipient R N|none`: set a reminder's remaining occurrence count.
enum RemainingCommand: Command {
    static let spec = CommandSpec(
        name: "remaining",
        summary: "Set how many occurrences a reminder has left: 0 finishes it, none removes the limit (operator).",
        usage: "chime remaining ID N|none --recipient R [--json]",
        options: [
            OptionSpec(name: "recipient", value: "R", help: "Whose reminder (ids are per recipient)."),
            jsonOption,
        ] + CommonOptions.specs)

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard arguments.positionals.count == 2 else { throw UsageError("give ID and a count N (or none)") }
        let recipient = try TriggerCommandLine.requiredRecipient(arguments)
        let text = arguments.positionals[1]
        var count: Int?
        if text != "none" {
            guard let number = Int(text), (0...TriggerCommand.maximumRemaining).contains(number) else {
                throw UsageError("the count must be 0 to \(TriggerCommand.maximumRemaining), or none")
            }
            count = number
        }
        let request = ControlRequest(command: .trigger(.setRemaining(ReminderID(arguments.positionals[0]), recipient: recipient, count: count)))
        let (reply, raw) = try makeControlClient(arguments).call(request, RemainingResult.self)
        guard !arguments.has("json"), let result = reply.result else { printJSON(raw); return 0 }
        let next = result.nextFireAt.map { ", next \(RFC3339.format($0))" } ?? ""
        output("\(result.id): \(result.remaining.map { "\($0) left" } ?? "no limit"), \(result.state.rawValue)\(next)")
        return 0
    }
}
