import ChimeCore
import ChimeRuntime
import ChimeSecurity
import ChimeWire
import Foundation
import ZeroMQ

/// The fire-event streams of one subscription, received by one thread with one `zmq_poll`:
/// a shard's stream (or one coordinator's) is a SUB socket on its events endpoint, with its
/// own ``GapFiller`` and its own catch-up (`events` requests over its control endpoint). A
/// ``SubscriberClient`` runs one stream; a ``ClusterSubscriber`` one per shard, so a
/// subscription costs one thread and one ZeroMQ context (one I/O thread) whatever the shard
/// count (issue 43: 80 shards made 80 threads and 80 contexts).
///
/// A catch-up request is not waited for: it is a ``ScatterExchange`` of one leg whose socket
/// joins the same poll (the client's reply deadline, Lazy Pirate resends and `rate_limited`
/// waits as ``ControlClient/exchange(_:)``), so a shard that is down or restarting delays no
/// other shard's events. Only its first request, before the coordinator ever answered, may
/// wait up to 300 ms for a TCP handshake to an endpoint that drops packets
/// (``EndpointProbe``).
///
/// A turn takes at most ``messagesPerTurn`` messages from each socket, so one shard's flood
/// cannot keep the others' events waiting. Not `Sendable`: one thread owns the sockets.
final class EventStreams {
    /// One shard's stream.
    final class Stream {
        /// The shard's id (0 for a lone coordinator): what ``run(adopt:onTurn:deliver:)``
        /// passes with each event.
        let shard: Int
        let socket: Socket
        /// The control client of the catch-up; `nil`: live events only, no gap filled.
        let catchUp: ControlClient?
        /// Orders the stream by `seq` with the catch-up's fills (`nil` without catch-up).
        var filler: GapFiller?
        /// Whether a catch-up answered `wrong_shard` is retried at the catch-up's pace (see
        /// ``SubscriberClient``'s `retriesWrongShard`) instead of ending the subscription.
        let retriesWrongShard: Bool
        /// The `events` request under way.
        var fetch: ScatterExchange?

        init(shard: Int, socket: Socket, catchUp: ControlClient?, since: UInt64?, retriesWrongShard: Bool) {
            self.shard = shard
            self.socket = socket
            self.catchUp = catchUp
            self.filler = catchUp == nil ? nil : GapFiller(since: since)
            self.retriesWrongShard = retriesWrongShard
        }
    }

    /// The most messages one turn takes from one stream's socket.
    static let messagesPerTurn = 1_000
    /// Events one catch-up page asks for.
    static let catchUpPage = 1_000

    let recipient: RecipientID?
    /// `recipient`'s exact topic: ZeroMQ matches by prefix, so each event's is compared.
    let recipientTopic: Data?
    /// Whether topic `handover` is subscribed and its events passed on.
    let takesHandOvers: Bool
    let highWaterMark: Int32
    let curve: CurveClientKeys?
    let maxMessageBytes: Int64
    let stop: StopSignal
    /// The context of every stream's SUB socket; the stop shuts it down, which ends a poll at once.
    let context: Context
    let codec = WireCodec()
    let handOverTopic = Data(Topic.handOver.utf8)
    private(set) var streams: [Stream] = []

    /// - Parameters:
    ///   - recipient: one recipient's events only; every fire event when `nil`.
    ///   - handOvers: subscribe topic `handover` too (never with `recipient`).
    ///   - stop: ends ``run(adopt:onTurn:deliver:)``.
    ///   - highWaterMark: events queued per stream before ZeroMQ drops (ZMQ_RCVHWM).
    ///   - curve: the subscriber's key and the coordinators' public key; `nil` without CURVE.
    ///   - maxEventBytes: the coordinators' `events.maxEventBytes` (a frame over it plus
    ///     1 KiB ends that stream's connection for good); `nil`: the default bound.
    /// - Throws: `ZeroMQError` when no context can be made.
    init(
        recipient: RecipientID?, handOvers: Bool, stop: StopSignal, highWaterMark: Int32, curve: CurveClientKeys?,
        maxEventBytes: Int?
    ) throws {
        self.recipient = recipient
        recipientTopic = recipient.map { Data(Topic.fire($0).utf8) }
        takesHandOvers = handOvers && recipient == nil
        self.stop = stop
        self.highWaterMark = highWaterMark
        self.curve = curve
        maxMessageBytes = maxEventBytes.map { Int64($0) + 1024 } ?? SubscriberSocket.defaultMaximumMessageBytes
        let context = try Context()
        self.context = context
        stop.onStop { context.shutdown() }
    }

    deinit {
        for stream in streams { stream.socket.close() }
    }

    /// Subscribes one more stream: its SUB socket connects now.
    /// - Parameters:
    ///   - shard: the id passed with its events.
    ///   - endpoint: the shard's events endpoint.
    ///   - catchUp: the control client and the `seq` after which to replay retained events
    ///     first (`nil`: from now); `nil`: live events only.
    ///   - retriesWrongShard: see ``Stream/retriesWrongShard``.
    /// - Throws: `ZeroMQError` for a bad endpoint, or `contextTerminated` after the stop.
    func add(shard: Int, endpoint: String, catchUp: (client: ControlClient, since: UInt64?)?, retriesWrongShard: Bool) throws {
        var topics = [recipient.map { Topic.fire($0) } ?? Topic.firePrefix]
        if takesHandOvers { topics.append(Topic.handOver) }
        let socket = try SubscriberSocket.make(
            endpoint: endpoint, topics: topics, highWaterMark: highWaterMark, curve: curve, context: context,
            maxMessageBytes: maxMessageBytes)
        streams.append(
            Stream(shard: shard, socket: socket, catchUp: catchUp?.client, since: catchUp?.since, retriesWrongShard: retriesWrongShard))
    }

    /// Receives until the stop: each turn calls `adopt` (which may ``add(shard:endpoint:catchUp:retriesWrongShard:)``
    /// streams), starts the catch-ups that are due, polls every socket at once (100 ms at
    /// most, 20 ms while events wait for a fill), takes what came, and calls `onTurn`.
    /// - Parameters:
    ///   - deliver: each event ready, in its stream's `seq` order, with its shard and JSON
    ///     (the bytes received for a live event; encoded again for a fetched one), each
    ///     firing id once per stream with a catch-up.
    /// - Throws: what `adopt` throws; `WireError` when a coordinator refuses an `events`
    ///   request (`unavailable` is retried; `wrong_shard` too with `retriesWrongShard`);
    ///   `ZeroMQError` from a socket. The stop (the context shut down) returns normally.
    func run(adopt: () throws -> Void, onTurn: () -> Void, deliver: (Int, ShardStreamEvent, Data) -> Void) throws {
        let clock = ContinuousClock()
        do {
            while !stop.isStopRequested {
                try adopt()
                let now = Date()
                for stream in streams where stream.fetch == nil {
                    if let filler = stream.filler, filler.isFetchDue(at: now) { try startFetch(stream) }
                }
                let poller = Poller()
                for stream in streams { poller.register(stream.socket, for: .readable) }
                var fetches: [(stream: Stream, polled: [(leg: ScatterExchange.Leg, index: Int)])] = []
                var wake: ContinuousClock.Instant?
                for stream in streams {
                    guard let fetch = stream.fetch else { continue }
                    let turn = fetch.register(in: poller)
                    fetches.append((stream, turn.polled))
                    if let at = turn.wake { wake = min(wake ?? at, at) }
                }
                var timeout: Duration = streams.contains { $0.filler?.hasWaitingEvents == true } ? .milliseconds(20) : .milliseconds(100)
                if let wake { timeout = min(timeout, max(.zero, wake - clock.now)) }
                if try poller.poll(timeout: timeout) > 0 {
                    for (index, stream) in streams.enumerated() where poller.events(at: index).contains(.readable) {
                        try receive(stream, deliver: deliver)
                    }
                }
                for (stream, polled) in fetches {
                    guard let fetch = stream.fetch else { continue }
                    fetch.advance(after: poller, polled: polled)
                    if fetch.isFinished, let outcome = fetch.outcomes.first?.outcome {
                        stream.fetch = nil
                        try fetched(outcome, for: stream, deliver: deliver)
                    }
                }
                let tick = Date()
                for stream in streams {
                    guard let ready = stream.filler?.tick(at: tick), !ready.isEmpty else { continue }
                    pass(ready, of: stream, deliver: deliver)
                }
                onTurn()
            }
        } catch let error as ZeroMQError where error.code == .contextTerminated {
            return
        }
    }

    /// Takes what `stream`'s socket holds, ``messagesPerTurn`` at most.
    func receive(_ stream: Stream, deliver: (Int, ShardStreamEvent, Data) -> Void) throws {
        for _ in 0..<Self.messagesPerTurn {
            guard let frames = try stream.socket.receiveMessage(dontWait: true) else { return }
            guard frames.count == 2 else { continue }
            let event: ShardStreamEvent
            if takesHandOvers, frames[0] == handOverTopic {
                guard let handOver = try? codec.decode(HandOverEvent.self, from: frames[1]) else { continue }
                event = .handOver(handOver)
            } else {
                if let recipientTopic, frames[0] != recipientTopic { continue }
                guard let fire = try? codec.decode(FireEvent.self, from: frames[1]) else { continue }
                event = .fire(fire)
            }
            // Changed in place (a copy of the filler would copy its remembered ids).
            guard let ready = stream.filler?.take(live: event, at: Date()) else {
                deliver(stream.shard, event, frames[1])
                continue
            }
            pass(ready, of: stream, deliver: deliver, live: (event, frames[1]))
        }
    }

    /// Passes `ready` on in order; `live` is the frame just received, passed as it came.
    func pass(
        _ ready: [ShardStreamEvent], of stream: Stream, deliver: (Int, ShardStreamEvent, Data) -> Void,
        live: (event: ShardStreamEvent, raw: Data)? = nil
    ) {
        for event in ready {
            if let live, live.event.seq == event.seq {
                deliver(stream.shard, event, live.raw)
                continue
            }
            switch event {
            case .fire(let fire): deliver(stream.shard, event, codec.encode(fire))
            case .handOver(let handOver): deliver(stream.shard, event, codec.encode(handOver))
            }
        }
    }

    /// Sends `stream`'s next `events` request: every retained event after its filler's
    /// watermark, a page at a time.
    func startFetch(_ stream: Stream) throws {
        guard let client = stream.catchUp, let filler = stream.filler else { return }
        var request = ControlRequest(command: .events(after: filler.fetchAfter, recipient: recipient, limit: Self.catchUpPage))
        request.requestId = UUID().uuidString
        let exchange = ScatterExchange([(stream.shard, client, codec.encode(request))])
        exchange.startPending()
        stream.fetch = exchange
    }

    /// Takes an `events` exchange's outcome: a page fills the stream (and the next page is
    /// asked at once when it was cut short); no reply paces the next attempt.
    /// - Throws: the coordinator's error reply (but `wrong_shard` with `retriesWrongShard`),
    ///   `malformed` for a reply that is not one.
    func fetched(_ outcome: Result<Data, WireError>, for stream: Stream, deliver: (Int, ShardStreamEvent, Data) -> Void) throws {
        let now = Date()
        let result: EventsResult
        do throws(WireError) {
            let reply = try codec.decode(ControlReply<EventsResult>.self, from: outcome.get())
            guard reply.ok else { throw reply.error ?? WireError(.malformed, "the reply has ok=false and no error") }
            guard let answer = reply.result else {
                stream.filler?.onFetchFailed(at: now)
                return
            }
            result = answer
        } catch {
            switch error.code {
            case .unavailable: stream.filler?.onFetchFailed(at: now)
            case .wrongShard where stream.retriesWrongShard: stream.filler?.onFetchRefused(at: now)
            default: throw error
            }
            return
        }
        guard let ready = stream.filler?.take(fetched: result.events, handOvers: result.handOvers ?? [], through: result.through, at: now)
        else { return }
        pass(ready, of: stream, deliver: deliver)
        if result.truncated { try startFetch(stream) }
    }
}
