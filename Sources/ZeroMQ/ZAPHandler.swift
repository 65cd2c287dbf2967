import Foundation
import HelperThreads
import Synchronization

/// One authentication request libzmq puts to the ZAP handler (ZeroMQ RFC 27) while a peer
/// connects to a socket that runs a security mechanism.
public struct ZAPRequest: Sendable, Hashable {
    /// The `ZMQ_ZAP_DOMAIN` of the socket being connected to; empty when it set none.
    public var domain: String
    /// The peer's address as the transport reports it (an IP address for `tcp://`).
    public var address: String
    /// The routing id of the socket being connected to (often empty).
    public var identity: Data
    /// `"NULL"`, `"PLAIN"` or `"CURVE"`.
    public var mechanism: String
    /// The mechanism's credentials: for CURVE one frame, the client's 32-byte public key.
    public var credentials: [Data]

    /// Creates the value from its fields (see each property for meaning).
    public init(domain: String, address: String, identity: Data, mechanism: String, credentials: [Data]) {
        self.domain = domain
        self.address = address
        self.identity = identity
        self.mechanism = mechanism
        self.credentials = credentials
    }

    /// The client's CURVE public key as 40 Z85 characters; `nil` for another mechanism or a
    /// credential that is not 32 bytes.
    public var curvePublicKey: String? {
        guard mechanism == "CURVE", credentials.count == 1, credentials[0].count == 32 else { return nil }
        return Z85.encode(credentials[0])
    }
}

/// What a ZAP handler answers: let the peer in under a user id, or refuse it.
public enum ZAPDecision: Sendable, Hashable {
    /// Accept the connection; `userID` becomes the `"User-Id"` property of every message
    /// received from it (``MessageProperty/userID``). At most 255 bytes.
    case allow(userID: String)
    /// Refuse the connection (status 400); `reason` is the status text, seen by no peer.
    case deny(reason: String)
}

/// A ZAP handler (ZeroMQ RFC 27): a `reply` socket bound at ``endpoint`` in a context,
/// answering every authentication request of that context's sockets with `authenticate`,
/// on a thread of its own.
///
/// Without a handler, libzmq lets any CURVE client that knows the server's public key
/// connect; with one, every CURVE handshake waits for its answer. Start it before any CURVE
/// socket of the context binds, and keep it running while they serve: a handler that stops
/// makes new CURVE connections fail (closed, never open). czmq's `zauth` is the model.
///
/// The corresponding libzmq endpoint is `inproc://zeromq.zap.01`.
public final class ZAPHandler: Sendable {
    /// Where libzmq sends authentication requests: one handler per context.
    public static let endpoint = "inproc://zeromq.zap.01"

    private let isStopRequested = Atomic<Bool>(false)
    private let thread = HelperThread(name: "zap-handler")
    private let counts = Mutex<(allowed: Int, denied: Int)>((0, 0))

    /// Binds ``endpoint`` in `context` and answers requests until ``stop()``.
    ///
    /// - Parameter authenticate: decides each request; called on the handler's thread, one
    ///   request at a time, so it must be quick (it holds up that peer's handshake).
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/addressInUse`` when the context
    ///   already has a ZAP handler, or ``ZeroMQError/Code/contextTerminated``.
    ///
    /// The corresponding libzmq calls are `zmq_socket(ZMQ_REP)` and `zmq_bind`.
    public init(context: Context, authenticate: @escaping @Sendable (ZAPRequest) -> ZAPDecision) throws {
        try thread.start {
            let socket = try Socket(.reply, context: context)
            try socket.set(.linger(milliseconds: 0))
            try socket.bind(to: Self.endpoint)
            return socket
        } run: { [self] socket in
            serve(socket, authenticate: authenticate)
            socket.close()
        }
    }

    /// How many requests were allowed and denied so far.
    public var decisionCounts: (allowed: Int, denied: Int) {
        counts.withLock { $0 }
    }

    /// Stops answering and waits (at most 2 s) for the thread to close its socket; CURVE
    /// connections made afterwards fail their handshake.
    public func stop() {
        guard !isStopRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        thread.join(timeout: .seconds(2))
    }

    private func serve(_ socket: Socket, authenticate: (ZAPRequest) -> ZAPDecision) {
        let poller = Poller()
        poller.register(socket, for: .readable)
        do {
            while !isStopRequested.load(ordering: .acquiring) {
                // 100 ms: how soon `stop()` is seen.
                guard try poller.poll(timeout: .milliseconds(100)) > 0,
                    let frames = try socket.receiveMessage(dontWait: true)
                else { continue }
                try socket.send(reply(to: frames, authenticate: authenticate))
            }
        } catch {
            // Only a context shutdown ends the loop early: the process is stopping.
        }
    }

    /// The reply frames for one request: version, request id, status code, status text,
    /// user id, metadata (empty). A request that is not RFC 27 version 1.0 gets status 500.
    private func reply(to frames: [Data], authenticate: (ZAPRequest) -> ZAPDecision) -> [Data] {
        let requestID = frames.count > 1 ? frames[1] : Data()
        guard frames.count >= 6, frames[0] == Data("1.0".utf8) else {
            counts.withLock { $0.denied += 1 }
            return Self.replyFrames(requestID: requestID, status: "500", text: "malformed ZAP request", userID: "")
        }
        let request = ZAPRequest(
            domain: String(decoding: frames[2], as: UTF8.self), address: String(decoding: frames[3], as: UTF8.self),
            identity: frames[4], mechanism: String(decoding: frames[5], as: UTF8.self),
            credentials: Array(frames.dropFirst(6)))
        switch authenticate(request) {
        case .allow(let userID):
            counts.withLock { $0.allowed += 1 }
            return Self.replyFrames(requestID: requestID, status: "200", text: "OK", userID: userID)
        case .deny(let reason):
            counts.withLock { $0.denied += 1 }
            return Self.replyFrames(requestID: requestID, status: "400", text: reason, userID: "")
        }
    }

    private static func replyFrames(requestID: Data, status: String, text: String, userID: String) -> [Data] {
        [Data("1.0".utf8), requestID, Data(status.utf8), Data(text.utf8), Data(userID.utf8), Data()]
    }
}
