import ChimeWire
import Foundation
import ZeroMQ

/// One request exchanged with several coordinators from the calling thread: every shard's
/// request goes out at once and one `zmq_poll` waits on all their sockets. Each shard keeps
/// what ``ControlClient/exchange(_:)`` gives one: its client's reply deadline and Lazy Pirate
/// retries on a fresh socket with the same bytes (ZeroMQ Guide, ch. 4), the waits a
/// `rate_limited` or `try_again` reply asks for, and the grace for a refused connection
/// before the first reply. A thread per shard did this before (issue 43: 80 shards made 80
/// threads for one `status`); now a scatter costs one thread whatever the shard count, and
/// takes as long as its slowest shard, as before.
///
/// ``run()`` polls for the exchange alone; a loop that polls other sockets too (the event
/// streams' catch-ups, ``EventStreams``) drives it a turn at a time with ``register(in:)``
/// and ``advance(after:polled:)``. Not `Sendable`: it uses the clients' sockets on the
/// calling thread.
final class ScatterExchange {
    /// Where one shard's exchange stands.
    enum Phase {
        /// To be sent in this pass, after a probe when the client never heard from its
        /// coordinator and has no socket (`giveUpAt`: the refused-connection grace's end, once
        /// a probe was refused).
        case starting(giveUpAt: ContinuousClock.Instant?)
        /// Nothing listened at the endpoint (refused) before the first reply: probed again at
        /// `nextProbe`, given up at `giveUpAt`.
        case probing(giveUpAt: ContinuousClock.Instant, nextProbe: ContinuousClock.Instant)
        /// The request went out on the client's socket; its reply is due by `deadline`.
        case awaiting(deadline: ContinuousClock.Instant)
        /// A `rate_limited` or `try_again` reply asked to send again at `until`.
        case resting(until: ContinuousClock.Instant)
        /// The exchange ended: the reply's bytes or the error that says why there are none.
        case done(Swift.Result<Data, WireError>)
    }

    /// One shard's exchange.
    final class Leg {
        let shard: Int
        let client: ControlClient
        let body: Data
        var phase: Phase = .starting(giveUpAt: nil)
        /// Sends made since the last reply (or the start): 1 ... `retries + 1`.
        var sends = 0
        /// `rate_limited` and `try_again` replies waited out.
        var waits = 0

        init(shard: Int, client: ControlClient, body: Data) {
            self.shard = shard
            self.client = client
            self.body = body
        }
    }

    let legs: [Leg]
    let clock = ContinuousClock()

    /// - Parameter legs: each shard with the client that reaches it and the bytes to send.
    init(_ legs: [(shard: Int, client: ControlClient, body: Data)]) {
        self.legs = legs.map { Leg(shard: $0.shard, client: $0.client, body: $0.body) }
    }

    /// Runs every exchange to its end.
    /// - Returns: per shard, in the order given, its reply's bytes or the error of the exchange
    ///   (`unavailable` when no reply came after every retry, `malformed`, `rate_limited`).
    func run() -> [(shard: Int, outcome: Swift.Result<Data, WireError>)] {
        startPending()
        while !isFinished {
            let poller = Poller()
            let turn = register(in: poller)
            let timeout = max(.zero, (turn.wake ?? clock.now) - clock.now)
            do {
                if poller.count > 0 {
                    _ = try poller.poll(timeout: timeout)
                } else if timeout > .zero {
                    Thread.sleep(forTimeInterval: timeout / .seconds(1))
                }
            } catch {
                // The context was shut down: nothing more can be sent or received.
                abandon("\(error)")
                break
            }
            advance(after: poller, polled: turn.polled)
        }
        return outcomes
    }

    /// Whether every leg's exchange has ended.
    var isFinished: Bool { legs.allSatisfy(isDone) }

    /// Per shard, in the order given, the outcome of its exchange (an `internal` error for a
    /// leg not finished: call it once ``isFinished``).
    var outcomes: [(shard: Int, outcome: Swift.Result<Data, WireError>)] {
        legs.map { leg in
            guard case .done(let outcome) = leg.phase else {
                return (leg.shard, .failure(WireError(.internal, "shard \(leg.shard) was not answered")))
            }
            return (leg.shard, outcome)
        }
    }

    /// One turn's part of a poll that may hold other sockets too: registers in `poller` the
    /// socket of every leg awaiting a reply (at the indices returned) and says by when the
    /// exchange needs ``advance(after:polled:)`` again without any socket ready (a reply's
    /// deadline, a rest's or probe's end); `wake` is `nil` when nothing is timed.
    func register(in poller: Poller) -> (polled: [(leg: Leg, index: Int)], wake: ContinuousClock.Instant?) {
        var polled: [(leg: Leg, index: Int)] = []
        var wake: ContinuousClock.Instant?
        for leg in legs {
            switch leg.phase {
            case .awaiting(let deadline):
                guard let socket = leg.client.socket else {
                    finish(leg, .failure(WireError(.internal, "shard \(leg.shard): the request's socket is gone")))
                    continue
                }
                polled.append((leg, poller.register(socket, for: .readable)))
                wake = min(wake ?? deadline, deadline)
            case .probing(_, let nextProbe): wake = min(wake ?? nextProbe, nextProbe)
            case .resting(let until): wake = min(wake ?? until, until)
            case .starting: wake = clock.now
            case .done: break
            }
        }
        return (polled, wake)
    }

    /// After `poller` (in which ``register(in:)`` put `polled`) returned: reads the replies
    /// that came, times out the legs past their deadline (resending on a fresh socket), ends
    /// the rests and probes that are over, and sends what is to be sent.
    func advance(after poller: Poller, polled: [(leg: Leg, index: Int)]) {
        for (leg, index) in polled where poller.events(at: index).contains(.readable) {
            receive(leg)
        }
        let now = clock.now
        for leg in legs {
            switch leg.phase {
            case .awaiting(let deadline) where now >= deadline: timedOut(leg)
            case .resting(let until) where now >= until:
                // A new round of sends, as `exchange` starts `exchangeOnce` again.
                leg.sends = 0
                leg.phase = .starting(giveUpAt: nil)
            case .probing(let giveUpAt, let nextProbe) where now >= nextProbe: leg.phase = .starting(giveUpAt: giveUpAt)
            default: break
            }
        }
        startPending()
    }

    /// Ends every leg still under way with `unavailable` (`reason`): their context was shut
    /// down, so nothing more can be sent or received.
    func abandon(_ reason: String) {
        for leg in legs where !isDone(leg) { finish(leg, .failure(WireError(.unavailable, reason))) }
    }

    func isDone(_ leg: Leg) -> Bool {
        if case .done = leg.phase { true } else { false }
    }

    func finish(_ leg: Leg, _ outcome: Swift.Result<Data, WireError>) { leg.phase = .done(outcome) }

    /// Sends every leg that is `.starting`. Those whose client never heard from its
    /// coordinator and has no socket first need the endpoint not to refuse connections
    /// (`ControlClient.waitForListener`): they are probed together, so endpoints that drop
    /// packets cost one probe timeout per pass, not one each; a refused one is probed again
    /// every 50 ms until the client's `refusedGrace` ends.
    func startPending() {
        let starting = legs.filter { if case .starting = $0.phase { true } else { false } }
        guard !starting.isEmpty else { return }
        let unproven = starting.filter { $0.client.socket == nil && !$0.client.hasHeardFromCoordinator }
        let outcomes = unproven.isEmpty ? [] : EndpointProbe.probe(unproven.map(\.client.endpoint))
        let now = clock.now
        for (leg, outcome) in zip(unproven, outcomes) where outcome == .refused {
            guard case .starting(let giveUpAt) = leg.phase else { continue }
            let limit = giveUpAt ?? now.advanced(by: leg.client.refusedGrace)
            guard now < limit else {
                finish(leg, .failure(WireError(.unavailable, "nothing is listening at \(leg.client.endpoint) (connection refused)")))
                continue
            }
            leg.phase = .probing(giveUpAt: limit, nextProbe: now.advanced(by: .milliseconds(50)))
        }
        for leg in starting {
            if case .starting = leg.phase { send(leg) }
        }
    }

    func send(_ leg: Leg) {
        do {
            let socket = try leg.client.currentSocket()
            _ = try socket.send([Data(), leg.body], dontWait: false)
            leg.sends += 1
            leg.phase = .awaiting(deadline: clock.now.advanced(by: leg.client.timeout))
        } catch let error as WireError {
            finish(leg, .failure(error))
        } catch {
            finish(leg, .failure(WireError(.unavailable, "\(error)")))
        }
    }

    /// A reply is readable: it ends the exchange, unless it asks to wait and send again.
    func receive(_ leg: Leg) {
        let frames: [Data]?
        do {
            frames = try leg.client.socket?.receiveMessage(dontWait: true)
        } catch {
            return finish(leg, .failure(WireError(.unavailable, "\(error)")))
        }
        guard let frames else { return }
        guard let reply = frames.last, frames.count == 2, frames[0].isEmpty else {
            return finish(leg, .failure(WireError(.malformed, "the coordinator's reply has \(frames.count) frames")))
        }
        leg.client.hasHeardFromCoordinator = true
        guard let retryAfter = ControlClient.rateLimitedWait(in: reply) else { return finish(leg, .success(reply)) }
        leg.waits += 1
        guard leg.waits <= ControlClient.maximumRateLimitedWaits else {
            if ControlClient.isTryAgain(reply) { return finish(leg, .success(reply)) }
            return finish(leg, .failure(WireError(
                .rateLimited, "the coordinator still refused the request after \(ControlClient.maximumRateLimitedWaits) waits",
                retryAfterMilliseconds: retryAfter)))
        }
        leg.phase = .resting(until: clock.now.advanced(by: .milliseconds(min(max(retryAfter, 1), 10_000))))
    }

    /// No reply by the deadline: the request or its reply may be lost, or the coordinator is
    /// down or failing over. A new socket drops anything queued for the old connection; after
    /// `retries + 1` sends the shard is `unavailable`.
    func timedOut(_ leg: Leg) {
        leg.client.socket?.close()
        leg.client.socket = nil
        guard leg.sends <= leg.client.retries else {
            return finish(leg, .failure(leg.client.noReplyError))
        }
        leg.phase = .starting(giveUpAt: nil)
    }
}
