import ChimeSecurity
import ChimeWire
import Foundation
import HelperThreads
import Synchronization
import ZeroMQ

/// Keeps many control requests in flight on one DEALER to one coordinator (issue 28, item 3),
/// where ``ControlClient`` waits for each reply before it sends the next.
///
/// Each request carries its `requestId`, and a reply is matched to its request by that id. The
/// only replies without one (`rate_limited`, and refusals of a request that did not decode) are
/// sent on the coordinator's ordinary reply path, so they never overtake an earlier reply on
/// the connection: such a reply settles the oldest request still waiting. A request unanswered
/// within `timeout`, while no other reply came on the connection either (a request queued
/// behind others waits as long as the coordinator keeps answering), is sent again, bytes
/// unchanged (same `requestId`, which the coordinator applies once), at most `retries` times,
/// then settles with `WireError(.unavailable)`. A
/// `rate_limited` reply is waited out (its `retryAfterMs`, at most 10 s) and the request sent
/// again, at most ``ControlClient/maximumRateLimitedWaits`` times.
///
/// One helper thread owns the DEALER; callers hand it requests under a lock and wake it over
/// an `inproc://` PAIR. `window` bounds the async API's requests in flight: `exchange` waits
/// for a place first. ``submit(_:requestId:completion:)`` does not wait; its caller bounds
/// what it submits. `Sendable`: any thread or task may use a client. ``close()`` settles what
/// is left with `.unavailable` and stops the thread.
public final class PipelinedClient: Sendable {
    /// Called on the client's thread with the raw reply bytes or the error.
    public typealias Completion = @Sendable (Result<Data, WireError>) -> Void

    let endpoint: String
    let timeout: Duration
    let retries: Int
    let window: Int
    let thread: HelperThread
    let shared: PipelineShared

    /// - Parameters:
    ///   - endpoint: the coordinator's control endpoint (`tcp://127.0.0.1:7700`).
    ///   - window: requests in flight at most through ``exchange(_:requestId:)``, 1 or more.
    ///   - timeout: how long one attempt waits for its reply.
    ///   - retries: attempts after the first for a request left unanswered.
    ///   - curve: this client's key and the coordinator's public key; `nil` without CURVE.
    ///   - context: the ZeroMQ context (`nil` makes one).
    ///   - maxReplyBytes: the largest reply frame accepted over `tcp://` or `ipc://`, in bytes
    ///     (``ControlClient/maximumReplyBytes`` by default); a larger one drops the connection
    ///     and the requests waiting on it are sent again, then settle `.unavailable`.
    /// - Throws: `WireError(.invalidArgument)` for a window below 1; `WireError(.unavailable)`
    ///   when the sockets cannot be made.
    public init(
        endpoint: String, window: Int = 256, timeout: Duration = .seconds(3), retries: Int = 2,
        curve: CurveClientKeys? = nil, context: Context? = nil, maxReplyBytes: Int64 = ControlClient.maximumReplyBytes
    ) throws(WireError) {
        guard window >= 1 else { throw WireError(.invalidArgument, "a pipelined client's window is at least 1") }
        self.endpoint = endpoint
        self.timeout = timeout
        self.retries = retries
        self.window = window
        let wakeEndpoint = "inproc://chime-pipelined-\(UUID().uuidString)"
        let shared = PipelineShared()
        self.shared = shared
        thread = HelperThread(name: "chime-pipeline")
        do {
            let context = try context ?? Context()
            let loop = PipelineLoop(
                endpoint: endpoint, timeout: timeout, retries: retries, maxReplyBytes: maxReplyBytes,
                secure: { socket in try curve?.secure(socket, for: endpoint) })
            try thread.start(setUp: { () throws -> UnsafeTransfer<(Socket, Socket)> in
                let dealer = try Socket(.dealer, context: context)
                try dealer.set(.linger(milliseconds: 0))
                try dealer.set(.maxMessageSize(bytes: maxReplyBytes))
                try curve?.secure(dealer, for: endpoint)
                try dealer.connect(to: endpoint)
                let wake = try Socket(.pair, context: context)
                try wake.bind(to: wakeEndpoint)
                return UnsafeTransfer((dealer, wake))
            }, run: { sockets in
                loop.run(dealer: sockets.value.0, wake: sockets.value.1, state: shared.state)
            })
            let waker = try Socket(.pair, context: context)
            try waker.set(.linger(milliseconds: 0))
            try waker.connect(to: wakeEndpoint)
            // The caller side of the wake-up pair is used only under the lock from here on.
            let transfer = UnsafeTransfer(waker)
            shared.state.withLock { $0.waker = transfer.value; $0.context = context }
        } catch {
            // A thread already running sees this within its next poll (at most 1 s) and ends.
            shared.state.withLock { $0.isClosed = true }
            throw WireError(.unavailable, "cannot make a pipelined control client for \(endpoint): \(error)")
        }
    }

    deinit { close() }

    /// Sends `body` (a request's JSON whose `requestId` is `requestId`) without waiting;
    /// `completion` gets the reply bytes or `WireError(.unavailable)`.
    public func submit(_ body: Data, requestId: String, completion: @escaping Completion) {
        let refused = shared.state.withLock { state -> Bool in
            guard !state.isClosed else { return true }
            state.enqueue(requestId: requestId, body: body, completion: completion, now: .now, timeout: timeout, retries: retries)
            state.wake()
            return false
        }
        if refused { completion(.failure(WireError(.unavailable, "the pipelined client to \(endpoint) is closed"))) }
    }

    /// Sends `body` once a place in the window is free and returns the reply's bytes.
    /// - Throws: `WireError(.unavailable)` when no attempt was answered or the client closed;
    ///   the last `rate_limited` error when the coordinator kept refusing.
    public func exchange(_ body: Data, requestId: String) async throws(WireError) -> Data {
        await takePlace()
        defer { releasePlace() }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Data, WireError>, Never>) in
            submit(body, requestId: requestId) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Encodes `request` (adding a `requestId` when missing), sends it through the window and
    /// decodes the reply's result.
    /// - Throws: `WireError` — the coordinator's error reply, `.unavailable` when no reply
    ///   came, `.malformed` when the reply is not a Chime reply.
    public func send<Result: Codable & Sendable>(_ request: ControlRequest, expecting: Result.Type)
        async throws(WireError) -> ControlReply<Result>
    {
        var request = request
        let requestId = request.requestId ?? UUID().uuidString
        request.requestId = requestId
        let codec = WireCodec()
        let data = try await exchange(codec.encode(request), requestId: requestId)
        let reply = try codec.decode(ControlReply<Result>.self, from: data)
        if !reply.ok { throw reply.error ?? WireError(.malformed, "the reply has ok=false and no error") }
        return reply
    }

    /// Settles every request still waiting with `.unavailable` and stops the client's thread.
    public func close() {
        let (wasOpen, isLoopThread) = shared.state.withLock { state -> (Bool, Bool) in
            guard !state.isClosed else { return (false, false) }
            state.isClosed = true
            state.wake()
            return (true, state.loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false)
        }
        guard wasOpen else { return }
        // From a completion (on the client's thread) the loop ends after it returns.
        if !isLoopThread { thread.join() }
        let (completions, places) = shared.state.withLock { state in
            defer { state.waiters.removeAll(); state.placeWaiters.removeAll(); state.waker?.close(); state.waker = nil }
            return (state.waiters.values.map(\.completion), state.placeWaiters)
        }
        for completion in completions { completion(.failure(WireError(.unavailable, "the pipelined client to \(endpoint) closed"))) }
        for place in places { place.resume() }
    }

    func takePlace() async {
        let hasPlace = shared.state.withLock { state -> Bool in
            guard state.placesTaken < window else { return false }
            state.placesTaken += 1
            return true
        }
        if hasPlace { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = shared.state.withLock { state -> Bool in
                if state.placesTaken < window || state.isClosed {
                    state.placesTaken += 1
                    return true
                }
                state.placeWaiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func releasePlace() {
        let next = shared.state.withLock { state -> CheckedContinuation<Void, Never>? in
            // A place passes straight to the next waiter, so the count stays the same.
            guard !state.placeWaiters.isEmpty else {
                state.placesTaken -= 1
                return nil
            }
            return state.placeWaiters.removeFirst()
        }
        next?.resume()
    }
}

/// The lock a client and its thread share.
final class PipelineShared: Sendable {
    let state = Mutex(PipelineState())
}

/// Moves a value that is not `Sendable` to the thread that will own it.
struct UnsafeTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
