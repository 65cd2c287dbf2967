import ChimeWire
import Foundation
import Synchronization
import ZeroMQ

/// What a ``PipelinedClient``'s callers and its thread share, under one lock.
struct PipelineState: ~Copyable {
    /// One request waiting for its reply.
    struct Waiter {
        var body: Data
        var completion: PipelinedClient.Completion
        /// When the current attempt stops waiting.
        var deadline: ContinuousClock.Instant
        var attemptsLeft: Int
        var rateLimitedWaits = 0
        /// Set while a `rate_limited` reply is waited out: when to send again.
        var resendAt: ContinuousClock.Instant?
        /// The order of first submission: the oldest settles a reply without a `requestId`.
        var sequence: UInt64
    }

    /// Request ids to send, in order (their bytes are in `waiters`).
    var outbox: [String] = []
    var waiters: [String: Waiter] = [:]
    var nextSequence: UInt64 = 0
    var isClosed = false
    /// The caller side of the wake-up PAIR; used only under the lock.
    var waker: Socket?
    var context: Context?
    /// Places of the async API's window taken, and the tasks waiting for one.
    var placesTaken = 0
    var placeWaiters: [CheckedContinuation<Void, Never>] = []
    /// When the connection last brought a reply: requests behind others on a busy coordinator
    /// are not timed out while replies keep coming.
    var lastReplyAt: ContinuousClock.Instant?
    /// The client's thread, so a `close()` from one of its completions does not wait for itself.
    var loopThread: pthread_t?
    /// Set when a request timed out with no reply on the connection: the loop connects afresh
    /// before resending (Lazy Pirate's new socket). libzmq ends a connection for good on a
    /// protocol error, such as a reply over `ZMQ_MAXMSGSIZE`, and never reconnects it itself.
    var isConnectionSuspect = false

    mutating func enqueue(
        requestId: String, body: Data, completion: @escaping PipelinedClient.Completion, now: ContinuousClock.Instant,
        timeout: Duration, retries: Int
    ) {
        waiters[requestId] = Waiter(
            body: body, completion: completion, deadline: now.advanced(by: timeout), attemptsLeft: retries,
            sequence: nextSequence)
        nextSequence &+= 1
        outbox.append(requestId)
    }

    /// Wakes the client's thread; a wake-up already queued is enough, so a full queue is fine.
    func wake() {
        _ = try? waker?.send([Data()], dontWait: true)
    }
}

/// The helper thread's loop: sends what callers queued, reads replies and settles their
/// requests, resends on timeout or after `rate_limited`.
struct PipelineLoop: Sendable {
    let endpoint: String
    let timeout: Duration
    let retries: Int
    /// The largest reply frame accepted (`ZMQ_MAXMSGSIZE`), in bytes.
    let maxReplyBytes: Int64
    /// Secures a fresh connection as the first one was (CURVE), or does nothing.
    let secure: @Sendable (Socket) throws -> Void

    /// Runs until the client closes.
    func run(dealer: Socket, wake: Socket, state: borrowing Mutex<PipelineState>) {
        var dealer = dealer
        defer {
            dealer.close()
            wake.close()
        }
        state.withLock { $0.loopThread = pthread_self() }
        var poller = Poller()
        poller.register(dealer, for: .readable)
        poller.register(wake, for: .readable)
        var unsent: [(String, Data)] = []
        while true {
            let now = ContinuousClock.now
            let (toSend, settled, nextDeadline, isClosed, isSuspect) = state.withLock { state in
                var turned = turn(&state, now: now)
                let isSuspect = state.isConnectionSuspect
                state.isConnectionSuspect = false
                if isSuspect {
                    // A fresh connection carries every request still waiting (the old one's
                    // replies are lost with it); only the timed-out ones spent an attempt.
                    let resent = Set(turned.0.map(\.0))
                    for (id, var waiter) in state.waiters where waiter.resendAt == nil && !resent.contains(id) {
                        waiter.deadline = now.advanced(by: timeout)
                        state.waiters[id] = waiter
                        turned.0.append((id, waiter.body))
                    }
                }
                return (turned.0, turned.1, turned.2, turned.3, isSuspect)
            }
            if isClosed { return }
            for (completion, result) in settled { completion(result) }
            if isSuspect, let fresh = reconnected(dealer) {
                dealer = fresh
                poller = Poller()
                poller.register(dealer, for: .readable)
                poller.register(wake, for: .readable)
                // Every waiting request is in `toSend` for the new connection.
                unsent.removeAll()
            }
            unsent += toSend
            unsent = send(unsent, on: dealer)
            let wait = unsent.isEmpty ? nextDeadline.map { max(.zero, $0 - now) } ?? .seconds(1) : .milliseconds(1)
            guard (try? poller.poll(timeout: min(wait, .seconds(1)))) != nil else { return }
            if poller.events(at: 1).contains(.readable) {
                while case _? = try? wake.receiveMessage(dontWait: true) {}
            }
            if poller.events(at: 0).contains(.readable) {
                var replies: [Data] = []
                while case let frames? = try? dealer.receiveMessage(dontWait: true) {
                    if frames.count == 2, frames[0].isEmpty { replies.append(frames[1]) }
                    if replies.count >= 4096 { break }
                }
                let settledNow = state.withLock { state in replies.compactMap { settle($0, in: &state, now: .now) } }
                for (completion, result) in settledNow { completion(result) }
            }
        }
    }

    /// A new DEALER connected to the endpoint in place of `old` (closed), or `nil` when none can
    /// be made (the old one is kept: its retries then run out as before).
    func reconnected(_ old: Socket) -> Socket? {
        guard let fresh = try? Socket(.dealer, context: old.context) else { return nil }
        do {
            try fresh.set(.linger(milliseconds: 0))
            try fresh.set(.maxMessageSize(bytes: maxReplyBytes))
            try secure(fresh)
            try fresh.connect(to: endpoint)
        } catch {
            fresh.close()
            return nil
        }
        old.close()
        return fresh
    }

    /// Sends `queue` in order without blocking; returns what could not be sent yet (no peer
    /// connected, or its queue is full).
    func send(_ queue: [(String, Data)], on dealer: Socket) -> [(String, Data)] {
        for (index, (_, body)) in queue.enumerated() {
            guard (try? dealer.send([Data(), body], dontWait: true)) == true else { return Array(queue[index...]) }
        }
        return []
    }

    /// Takes the outbox, resends timed-out and rate-limited requests, settles requests out of
    /// attempts; returns (bodies to send, settled completions, the next deadline, closed).
    func turn(_ state: inout PipelineState, now: ContinuousClock.Instant)
        -> ([(String, Data)], [(PipelinedClient.Completion, Result<Data, WireError>)], ContinuousClock.Instant?, Bool)
    {
        if state.isClosed { return ([], [], nil, true) }
        var toSend = state.outbox.compactMap { id in state.waiters[id].map { (id, $0.body) } }
        state.outbox.removeAll(keepingCapacity: true)
        var settled: [(PipelinedClient.Completion, Result<Data, WireError>)] = []
        var next: ContinuousClock.Instant?
        for (id, var waiter) in state.waiters {
            if let resendAt = waiter.resendAt {
                if resendAt <= now {
                    waiter.resendAt = nil
                    waiter.deadline = now.advanced(by: timeout)
                    toSend.append((id, waiter.body))
                    state.waiters[id] = waiter
                }
            } else if waiter.deadline <= now, state.lastReplyAt.map({ $0.advanced(by: timeout) <= now }) ?? true {
                guard waiter.attemptsLeft > 0 else {
                    state.waiters[id] = nil
                    settled.append((waiter.completion, .failure(WireError(
                        .unavailable, "no reply from the coordinator at \(endpoint) after \(retries + 1) attempts of \(timeout)"))))
                    continue
                }
                waiter.attemptsLeft -= 1
                waiter.deadline = now.advanced(by: timeout)
                toSend.append((id, waiter.body))
                state.waiters[id] = waiter
                state.isConnectionSuspect = true
            }
            let due = waiter.resendAt ?? max(waiter.deadline, state.lastReplyAt.map { $0.advanced(by: timeout) } ?? waiter.deadline)
            if next.map({ due < $0 }) ?? true { next = due }
        }
        return (toSend, settled, next, false)
    }

    /// Matches one reply to its request: by `requestId`, else the oldest waiting. Returns the
    /// completion to call, or `nil` (a late reply, or one that waits out `rate_limited`).
    func settle(_ reply: Data, in state: inout PipelineState, now: ContinuousClock.Instant)
        -> (PipelinedClient.Completion, Result<Data, WireError>)?
    {
        state.lastReplyAt = now
        let requestId = WirePeek.requestId(in: reply)
        let id: String
        if let requestId {
            guard state.waiters[requestId] != nil else { return nil }
            id = requestId
        } else {
            guard let oldest = state.waiters.filter({ $0.value.resendAt == nil }).min(by: { $0.value.sequence < $1.value.sequence })?.key
            else { return nil }
            id = oldest
        }
        guard var waiter = state.waiters[id] else { return nil }
        if let retryAfter = ControlClient.rateLimitedWait(in: reply) {
            waiter.rateLimitedWaits += 1
            if waiter.rateLimitedWaits <= ControlClient.maximumRateLimitedWaits {
                waiter.resendAt = now.advanced(by: .milliseconds(min(max(retryAfter, 1), 10_000)))
                state.waiters[id] = waiter
                return nil
            }
            state.waiters[id] = nil
            // A slot still moving after every wait: the `try_again` reply as it is.
            if ControlClient.isTryAgain(reply) { return (waiter.completion, .success(reply)) }
            return (waiter.completion, .failure(WireError(
                .rateLimited, "the coordinator still refused the request after \(ControlClient.maximumRateLimitedWaits) waits",
                retryAfterMilliseconds: retryAfter)))
        }
        state.waiters[id] = nil
        return (waiter.completion, .success(reply))
    }
}
