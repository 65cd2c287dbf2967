import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import ZeroMQ

/// Receives fire events from the coordinator's XPUB endpoint, optionally catching up on
/// events it missed first.
///
/// Topics match by prefix in ZeroMQ (`fire.al` would also match `fire.alice`), so
/// `recipient` is also compared exactly on every event.
///
/// Catch-up (`since`) follows the Guide's Clone pattern (ch. 5): subscribe first, then fetch
/// retained events after `since` over the control socket, deliver those not yet seen in `seq`
/// order, and go on live, skipping any `seq` already delivered. Because an event published
/// before the subscription took effect may be acknowledged after the first fetch, fetches
/// repeat (every 200 ms) until every `seq` below the first live event is settled, or for
/// 3 s when nothing arrives live.
public final class SubscriberClient {
    let endpoint: String
    let recipient: RecipientID?
    let stop: StopSignal
    let codec = WireCodec()

    /// - Parameters:
    ///   - endpoint: the events endpoint to connect to (`tcp://127.0.0.1:7703`).
    ///   - recipient: one recipient's events only; every fire event when `nil`.
    ///   - highWaterMark: events queued before ZeroMQ drops (ZMQ_RCVHWM).
    ///   - curve: this subscriber's key and the coordinator's public key; `nil` without CURVE.
    public init(
        endpoint: String, recipient: RecipientID?, stop: StopSignal, highWaterMark: Int32 = 250_000,
        curve: CurveClientKeys? = nil
    ) {
        self.curve = curve
        self.endpoint = endpoint
        self.recipient = recipient
        self.stop = stop
        self.highWaterMark = highWaterMark
    }

    let highWaterMark: Int32
    let curve: CurveClientKeys?

    /// Calls `onEvent` for every fire event until the stop signal, with the event's JSON.
    /// - Parameters:
    ///   - catchUp: the control client and the `seq` after which to replay retained events first.
    ///   - onReady: called once the subscription is sent.
    /// - Throws: `ZeroMQError` when the endpoint is invalid; `WireError` when catch-up fails.
    public func run(
        catchUp: (client: ControlClient, since: UInt64)? = nil, onReady: () -> Void = {},
        onEvent: (FireEvent, Data) -> Void
    ) throws {
        let context = try Context()
        stop.onStop { context.shutdown() }
        let socket = try Socket(.subscriber, context: context)
        defer { socket.close() }
        try socket.set(.linger(milliseconds: 0))
        try socket.set(.receiveHighWaterMark(highWaterMark))
        let topic = recipient.map { Topic.fire($0) } ?? Topic.firePrefix
        try socket.set(.subscribe(Data(topic.utf8)))
        try curve?.secure(socket, for: endpoint)
        try socket.connect(to: endpoint)
        onReady()
        var progress = catchUp.map { CatchUpProgress(since: $0.since, startedAt: Date()) }
        if let catchUp, var current = progress {
            try fetch(catchUp.client, progress: &current, onEvent: onEvent)
            progress = current
        }
        let poller = Poller()
        poller.register(socket, for: .readable)
        do {
            while !stop.isStopRequested {
                let fetching = progress.map { !$0.isFetchDone } ?? false
                if try poller.poll(timeout: .milliseconds(fetching ? 50 : 100)) > 0 {
                    while let frames = try socket.receiveMessage(dontWait: true) {
                        guard frames.count == 2 else { continue }
                        if let recipient, frames[0] != Data(Topic.fire(recipient).utf8) { continue }
                        guard let event = try? codec.decode(FireEvent.self, from: frames[1]) else { continue }
                        if var current = progress {
                            guard current.acceptLive(event) else { continue }
                            progress = current
                        }
                        onEvent(event, frames[1])
                    }
                }
                if let catchUp, var current = progress, !current.isFetchDone, current.isFetchDue(at: Date()) {
                    try fetch(catchUp.client, progress: &current, onEvent: onEvent)
                    // Fetching stops, but replayed seqs stay known: a live copy of a replayed
                    // event can still arrive after the last fetch.
                    current.isFetchDone = current.isComplete(at: Date())
                    progress = current
                }
            }
        } catch let error as ZeroMQError where error.code == .contextTerminated {
            return
        }
    }

    /// Fetches every retained event after `since` (page by page) and delivers the unseen ones.
    func fetch(_ client: ControlClient, progress: inout CatchUpProgress, onEvent: (FireEvent, Data) -> Void) throws {
        var after = progress.since
        while true {
            let reply = try client.send(
                ControlRequest(command: .events(after: after, recipient: recipient, limit: 1000)),
                expecting: EventsResult.self)
            guard let result = reply.result else { return }
            for event in result.events where progress.acceptReplayed(event) {
                onEvent(event, codec.encode(event))
            }
            after = result.events.last?.seq ?? after
            progress.settledThrough = result.through
            if !result.truncated { break }
        }
        progress.lastFetchAt = Date()
    }
}

/// Where a catch-up stands: what was delivered, the first live `seq`, the settled watermark.
struct CatchUpProgress {
    let since: UInt64
    let startedAt: Date
    var delivered: Set<UInt64> = []
    var firstLiveSeq: UInt64?
    /// Set once catch-up is complete: no more fetches, and live seqs are no longer recorded
    /// (so the set stays as large as the replay), only checked against it.
    var isFetchDone = false
    var settledThrough: UInt64 = 0
    var lastFetchAt = Date.distantPast

    init(since: UInt64, startedAt: Date) {
        self.since = since
        self.startedAt = startedAt
    }

    /// Whether a replayed event is new (and records it).
    mutating func acceptReplayed(_ event: FireEvent) -> Bool {
        event.seq > since && delivered.insert(event.seq).inserted
    }

    /// Whether a live event is new (and records it).
    mutating func acceptLive(_ event: FireEvent) -> Bool {
        if firstLiveSeq == nil { firstLiveSeq = event.seq }
        guard event.seq > since else { return false }
        if isFetchDone { return !delivered.contains(event.seq) }
        return delivered.insert(event.seq).inserted
    }

    func isFetchDue(at now: Date) -> Bool { now.timeIntervalSince(lastFetchAt) >= 0.2 }

    /// Done once every `seq` below the first live one is settled, or after 3 s with no live event.
    func isComplete(at now: Date) -> Bool {
        if let firstLiveSeq { return settledThrough + 1 >= firstLiveSeq }
        return now.timeIntervalSince(startedAt) >= 3
    }
}
