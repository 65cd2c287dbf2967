import ChimeCore
import ChimeWire
import Foundation
import ZeroMQ
import ChimeSecurity

/// Sends control requests to the coordinator and waits for replies, retrying on timeout
/// with a fresh socket and the same `requestId` (Lazy Pirate, ZeroMQ Guide ch. 4), so a
/// retried `schedule` is applied once. Not `Sendable`: one thread uses a client.
///
/// Until the coordinator has answered once, a refused connection (nothing listens at a
/// `tcp://` or `ipc://` endpoint) fails fast: after `refusedGrace` of refusals the request
/// throws `.unavailable` without waiting out the timeouts. After a first reply, a refusal is
/// taken for a restart or failover and the normal retries apply.
public final class ControlClient {
    let context: Context
    let endpoint: String
    let timeout: Duration
    let retries: Int
    let codec = WireCodec()
    var socket: Socket?
    let curve: CurveClientKeys?
    let refusedGrace: Duration
    /// Whether a reply ever came: from then on refusals are transient (a failover).
    var hasHeardFromCoordinator = false

    /// The largest reply frame this client accepts, in bytes.
    let maxReplyBytes: Int64

    /// The default largest reply frame a client DEALER accepts, in bytes (256 MiB). The
    /// largest legitimate replies are listing pages (`list`, `ctl dead-letters`, `events`):
    /// at most 10,000 items (`PageSize.maximum`); a typical reminder lists in under 1 KiB, so
    /// a full page is about 10 MiB, and 256 MiB leaves room for reminders averaging 25 KiB
    /// (long texts, `userInfo`). A larger frame is refused by libzmq (`ZMQ_MAXMSGSIZE`), which
    /// drops the connection instead of allocating it: the request times out and throws
    /// `.unavailable`; a page of very large reminders is then read with a smaller `limit`.
    public static let maximumReplyBytes: Int64 = 256 << 20

    /// - Parameters:
    ///   - endpoint: the coordinator's control endpoint (`tcp://127.0.0.1:7700`).
    ///   - timeout: how long to wait for each reply.
    ///   - retries: how many times to resend after a timeout.
    ///   - curve: this client's key and the coordinator's public key; `nil` without CURVE.
    ///     A key the coordinator does not know gets no connection, so `.unavailable`.
    ///   - context: the ZeroMQ context to use; `nil` makes one (pass the coordinator's to
    ///     reach it over `inproc://` in the same process).
    ///   - refusedGrace: how long refused connections are tolerated before the first reply
    ///     (a coordinator starting up) before `.unavailable` is thrown.
    ///   - maxReplyBytes: the largest reply frame accepted over `tcp://` or `ipc://`, in bytes
    ///     (``maximumReplyBytes`` by default).
    /// - Throws: `ZeroMQError` when no context can be made.
    public init(
        endpoint: String, timeout: Duration = .seconds(3), retries: Int = 2, curve: CurveClientKeys? = nil,
        context: Context? = nil, refusedGrace: Duration = .milliseconds(500), maxReplyBytes: Int64 = maximumReplyBytes
    ) throws {
        self.maxReplyBytes = maxReplyBytes
        self.curve = curve
        self.refusedGrace = refusedGrace
        self.context = try context ?? Context()
        self.endpoint = endpoint
        self.timeout = timeout
        self.retries = retries
    }

    deinit { socket?.close() }

    /// Sends `request` (a `requestId` is added when missing) and decodes the reply's result.
    /// - Throws: `WireError` — the coordinator's error reply, `.unavailable` when no reply
    ///   came after every retry, `.malformed` when the reply is not a Chime reply.
    public func send<Result: Codable & Sendable>(_ request: ControlRequest, expecting: Result.Type)
        throws(WireError) -> ControlReply<Result>
    {
        try sendReturningBytes(request, expecting: Result.self).reply
    }

    /// `send(_:expecting:)` that also returns the reply's raw JSON (for `--json` output).
    /// - Throws: as `send(_:expecting:)`.
    public func sendReturningBytes<Result: Codable & Sendable>(_ request: ControlRequest, expecting: Result.Type)
        throws(WireError) -> (reply: ControlReply<Result>, bytes: Data)
    {
        var request = request
        if request.requestId == nil { request.requestId = UUID().uuidString }
        let data = try exchange(codec.encode(request))
        let reply = try codec.decode(ControlReply<Result>.self, from: data)
        if !reply.ok {
            throw reply.error ?? WireError(.malformed, "the reply has ok=false and no error")
        }
        return (reply, data)
    }

    /// Sends raw JSON bytes and returns the raw reply bytes. A `rate_limited` reply, or a
    /// `try_again` one (a slot that is moving between shards), is not returned: the client
    /// waits its `retryAfterMs` (at most 10 s each time) and sends the same bytes again (same
    /// `requestId`), up to ``maximumRateLimitedWaits`` times.
    /// - Returns: the reply; after that many waits a `try_again` reply is returned as it is
    ///   (so the caller sees the `try_again` error it carries).
    /// - Throws: `WireError(.unavailable)` when no reply came after every retry; a
    ///   `rate_limited` error when the coordinator kept refusing.
    public func exchange(_ body: Data) throws(WireError) -> Data {
        var waits = 0
        while true {
            let reply = try exchangeOnce(body)
            guard let retryAfter = Self.rateLimitedWait(in: reply) else { return reply }
            waits += 1
            if waits > Self.maximumRateLimitedWaits {
                if Self.isTryAgain(reply) { return reply }
                throw WireError(
                    .rateLimited, "the coordinator still refused the request after \(Self.maximumRateLimitedWaits) waits",
                    retryAfterMilliseconds: retryAfter)
            }
            Thread.sleep(forTimeInterval: Double(min(max(retryAfter, 1), 10_000)) / 1000)
        }
    }

    /// How many `rate_limited` replies one request waits out before giving up.
    public static let maximumRateLimitedWaits = 20

    /// The `retryAfterMs` of a `rate_limited` or `try_again` reply; `nil` for any other reply.
    /// Only short replies are decoded (a refusal is about 150 bytes; a listing may be megabytes).
    static func rateLimitedWait(in reply: Data) -> Int? {
        // A reply that does not decode here is not a refusal to wait out; the caller decodes
        // it again and reports what is wrong with it.
        guard reply.count < 1024,
            reply.range(of: Data(#""rate_limited""#.utf8)) != nil || reply.range(of: Data(#""try_again""#.utf8)) != nil,
            let error = WirePeek.error(in: reply), error.code == .rateLimited || error.code == .tryAgain
        else { return nil }
        return error.retryAfterMilliseconds ?? 1000
    }

    /// Whether a reply that ``rateLimitedWait(in:)`` read is a `try_again` (a slot moving
    /// between shards) rather than a `rate_limited` refusal.
    static func isTryAgain(_ reply: Data) -> Bool {
        WirePeek.error(in: reply)?.code == .tryAgain
    }

    /// One exchange with Lazy Pirate retries on timeout.
    func exchangeOnce(_ body: Data) throws(WireError) -> Data {
        do {
            for _ in 0...retries {
                if socket == nil && !hasHeardFromCoordinator { try waitForListener() }
                let socket = try currentSocket()
                _ = try socket.send([Data(), body], dontWait: false)
                let poller = Poller()
                poller.register(socket, for: .readable)
                if try poller.poll(timeout: timeout) > 0, let frames = try socket.receiveMessage(dontWait: true) {
                    guard let reply = frames.last, frames.count == 2, frames[0].isEmpty else {
                        throw WireError(.malformed, "the coordinator's reply has \(frames.count) frames")
                    }
                    hasHeardFromCoordinator = true
                    return reply
                }
                // No reply: the request or the reply may be lost, or the coordinator is down or
                // failing over. A new socket drops anything queued for the old connection.
                socket.close()
                self.socket = nil
            }
        } catch let error as WireError {
            throw error
        } catch {
            throw WireError(.unavailable, "\(error)")
        }
        throw noReplyError
    }

    /// `unavailable`: no reply after every attempt (with a hint about keys under CURVE).
    var noReplyError: WireError {
        let hint = curve == nil ? "" : " (with CURVE: is this key on an allow-list, and is the server key the coordinator's?)"
        return WireError(
            .unavailable, "no reply from the coordinator at \(endpoint) after \(retries + 1) attempts of \(timeout)\(hint)")
    }

    /// Returns once the endpoint accepts connections or gives no verdict; polls every 50 ms
    /// while it refuses.
    /// - Throws: `WireError(.unavailable)` when it still refuses after `refusedGrace`.
    func waitForListener() throws(WireError) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: refusedGrace)
        while EndpointProbe.probe(endpoint) == .refused {
            guard clock.now < deadline else {
                throw WireError(.unavailable, "nothing is listening at \(endpoint) (connection refused)")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    func currentSocket() throws -> Socket {
        if let socket { return socket }
        let socket = try Socket(.dealer, context: context)
        try socket.set(.linger(milliseconds: 0))
        // A reply larger than any the coordinator makes drops the connection (libzmq) instead
        // of being allocated: the request then times out and throws `.unavailable`.
        try socket.set(.maxMessageSize(bytes: maxReplyBytes))
        try curve?.secure(socket, for: endpoint)
        try socket.connect(to: endpoint)
        self.socket = socket
        return socket
    }
}
