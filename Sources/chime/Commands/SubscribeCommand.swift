import ChimeCluster
import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation

enum SubscribeCommand: Command {
    static let spec = CommandSpec(
        name: "subscribe",
        summary: "Print fire events as they happen, each firing id once, with no gap across coordinator restarts.",
        usage: "chime subscribe [--recipient R] [--since SEQ | --no-gap-fill] [--json] [--count N] [--timeout DURATION]",
        options: [
            OptionSpec(name: "recipient", value: "R", help: "Only this recipient's events (topic fire.R); all when absent."),
            OptionSpec(name: "since", value: "SEQ", help: "First replay retained events with seq > SEQ (from the coordinator), then go on live with no gap and no duplicate."),
            OptionSpec(name: "no-gap-fill", value: nil, help: "Print the live stream only: no catch-up after a coordinator restart or a seq gap."),
            OptionSpec(name: "json", value: nil, help: "Print each event's JSON, one a line."),
            OptionSpec(name: "count", value: "N", help: "Exit after N events."),
            OptionSpec(name: "timeout", value: "DURATION", help: "Exit with status 1 if --count events did not arrive in time."),
        ] + CommonOptions.specs)

    static func run(_ arguments: Arguments) throws -> Int32 {
        let configuration = try CommonOptions.configuration(arguments)
        let count = try arguments.integer("count")
        let stop = StopSignal()
        installTerminationHandlers(stop)
        var timedOut = false
        if let seconds = try arguments.seconds("timeout") {
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { @Sendable in stop.requestStop() }
            timedOut = true
        }
        var received = 0
        let client = SubscriberClient(
            endpoint: configuration.endpoints.events.connect,
            recipient: arguments.value("recipient").map { RecipientID($0) }, stop: stop,
            highWaterMark: configuration.eventHighWaterMark,
            curve: try CommonOptions.clientKeys(configuration, role: .subscriber))
        var catchUp: (client: ControlClient, since: UInt64?)?
        if !arguments.has("no-gap-fill") {
            let since = try arguments.value("since").map { text in
                guard let seq = UInt64(text) else { throw UsageError("--since must be a sequence number, not '\(text)'") }
                return seq
            }
            // The subscriber key may catch up too (the control `events` request).
            catchUp = (
                try ControlClient(
                    endpoint: configuration.endpoints.control.connect,
                    timeout: .milliseconds(configuration.client.requestTimeoutMilliseconds),
                    retries: configuration.client.retries, curve: try CommonOptions.clientKeys(configuration, role: .subscriber)),
                since
            )
        } else if arguments.value("since") != nil {
            throw UsageError("--since needs the catch-up that --no-gap-fill turns off")
        }
        try client.run(catchUp: catchUp) { event, raw in
            if arguments.has("json") {
                printJSON(raw)
            } else {
                output(describe(event))
            }
            received += 1
            if let count, received >= count { stop.requestStop() }
        }
        if let count, timedOut, received < count {
            printError("timed out after \(received) of \(count) events")
            return 1
        }
        return 0
    }
}

