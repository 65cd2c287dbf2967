import ChimeCore
import ChimeRuntime
import ChimeWire
import ChimeCommandLine
import Foundation
import ZeroMQ
import ChimeClient

enum SubscribeCommand: Command {
    static let spec = CommandSpec(
        name: "subscribe",
        summary: "Print fire events as they happen, each firing id once, with no gap across coordinator restarts.",
        usage: "chime subscribe [--topic fire|badge|action] [--recipient R] [--since SEQ|SHARD:SEQ,… | --no-gap-fill] [--json] [--count N] [--timeout DURATION]",
        options: [
            OptionSpec(name: "topic", value: "fire|badge|action", help: "Which events: fire (default; with catch-up), badge or action (live only)."),
            OptionSpec(name: "recipient", value: "R", help: "Only this recipient's events (topic fire.R, badge.R or action.R); all when absent."),
            OptionSpec(name: "since", value: "SEQ", help: "First replay retained events with seq > SEQ (from the coordinator), then go on live with no gap and no duplicate. With several shards (seq counts per shard): SEQ for every shard, or SHARD:SEQ,SHARD:SEQ."),
            OptionSpec(name: "no-gap-fill", value: nil, help: "Print the live stream only: no catch-up after a coordinator restart or a seq gap."),
            OptionSpec(name: "json", value: nil, help: "Print each event's JSON, one a line."),
            OptionSpec(name: "count", value: "N", help: "Exit after N events."),
            OptionSpec(name: "timeout", value: "DURATION", help: "Exit with status 1 if --count events did not arrive in time."),
        ] + CommonOptions.specs,
        details: """
            On a cluster of several shards (the coordinator's map names more than one) every shard's events
            endpoint is subscribed (only the recipient's shard with --recipient), each with its own watermark
            and catch-up: each firing id once, with no gap across any shard's restart. Events of different
            shards arrive in no particular order; with --json each carries "shard". Without --recipient, fire
            events also print each shard's hand-over events: a line {"type": "handover", "seq", "shard", "move",
            "slots", "target", "mapEpoch", "at"} when a slot move committed and the shard released its slots,
            after every event of those slots it published; the slots' later events come from "target", and are
            printed after it (held until it arrives, 5 s at most). Hand-overs do not count towards --count.
            """)

    static func run(_ arguments: Arguments) throws -> Int32 {
        let configuration = try CommonOptions.configuration(arguments)
        let count = try arguments.integer("count")
        if let count, count < 1 { throw UsageError("--count must be at least 1, not \(count)") }
        let topic = arguments.value("topic") ?? "fire"
        guard ["fire", "badge", "action"].contains(topic) else {
            throw UsageError("--topic must be fire, badge or action, not '\(topic)'\(Suggestions.hint(for: topic, among: ["fire", "badge", "action"]))")
        }
        let stop = StopSignal()
        installTerminationHandlers(stop)
        var timedOut = false
        if let seconds = try arguments.seconds("timeout") {
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { @Sendable in stop.requestStop() }
            timedOut = true
        }
        var received = 0
        let map = try shardMap(configuration, stop: stop)
        // Stopped while the map was asked for: nothing was printed, nothing to wait for.
        if stop.isStopRequested { return try finish(received: 0, count: count, timedOut: timedOut) }
        if let map, map.shards.count > 1 {
            return try runAcrossShards(arguments, map: map, topic: topic, count: count, stop: stop, timedOut: timedOut)
        }
        if topic != "fire" {
            if arguments.value("since") != nil { throw UsageError("--since applies to fire events only") }
            let subscriber = TopicSubscriber(
                endpoint: configuration.endpoints.events.connect, prefix: topic + ".",
                recipient: arguments.value("recipient").map { RecipientID($0) }, stop: stop,
                highWaterMark: configuration.eventHighWaterMark,
                curve: try CommonOptions.clientKeys(configuration, role: .subscriber))
            try subscriber.run { topicName, raw in
                if let count, received >= count { return }
                output(arguments.has("json") ? String(decoding: raw, as: UTF8.self) : "\(topicName) \(String(decoding: raw, as: UTF8.self))")
                received += 1
                if let count, received >= count { stop.requestStop() }
            }
            return try finish(received: received, count: count, timedOut: timedOut)
        }
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
            // A context the stop signal shuts down: a catch-up request waiting out its timeouts
            // for a dead coordinator (seconds) then ends at once instead of holding up SIGTERM.
            let catchUpContext = try Context()
            stop.onStop { catchUpContext.shutdown() }
            // The subscriber key may catch up too (the control `events` request).
            catchUp = (
                try ControlClient(
                    endpoint: configuration.endpoints.control.connect,
                    timeout: .milliseconds(configuration.client.requestTimeoutMilliseconds),
                    retries: configuration.client.retries, curve: try CommonOptions.clientKeys(configuration, role: .subscriber),
                    context: catchUpContext),
                since
            )
        } else if arguments.value("since") != nil {
            throw UsageError("--since needs the catch-up that --no-gap-fill turns off")
        }
        try client.run(
            catchUp: catchUp,
            onEvent: { event, raw in
                // A catch-up page delivers many events in one go: stop printing at --count.
                if let count, received >= count { return }
                if arguments.has("json") {
                    printJSON(raw)
                } else {
                    output(describe(event))
                }
                received += 1
                if let count, received >= count { stop.requestStop() }
            },
            onHandOver: { event, raw in
                // Not counted by --count (fire events are).
                guard !stop.isStopRequested else { return }
                if arguments.has("json") { printJSON(raw) } else { output(describe(event)) }
            })
        return try finish(received: received, count: count, timedOut: timedOut)
    }

    /// Exit status 1 when `--timeout` ended the wait before `--count` events came.
    /// - Throws: `RuntimeFailure` `timeout` in that case.
    static func finish(received: Int, count: Int?, timedOut: Bool) throws -> Int32 {
        if let count, timedOut, received < count {
            throw RuntimeFailure("timeout", "timed out after \(received) of \(count) events")
        }
        return 0
    }
}

