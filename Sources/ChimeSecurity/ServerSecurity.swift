import ChimeRuntime
import Foundation
import Synchronization
import ZeroMQ

/// The coordinator's side of CURVE: its server key pair and the allow-lists of a key
/// directory, reloadable while it runs (SIGHUP). Shared by the coordinator's thread, the
/// forwarder's thread and the ZAP handler's thread.
///
/// The Guide's "Ironhouse" pattern (ch. 5): every connection is encrypted, and only keys
/// on an allow-list get in; czmq's `zauth` and `zcertstore` are the model.
public final class ServerSecurity: Sendable {
    /// The key directory (`chime keys init DIR`).
    public let directory: URL
    /// The server's key pair, from `server.key_secret`.
    public let serverKeys: CurveKeyPair
    private let current: Mutex<AccessPolicy>

    /// Loads `server.key_secret` and the allow-lists of `directory`.
    ///
    /// - Throws: `SecurityError`: `.curveUnavailable` when libzmq lacks CURVE,
    ///   `.badCertificate` or `.loosePermissions` for the files (``AccessPolicy/load(directory:)``).
    public init(directory: URL) throws(SecurityError) {
        guard zeroMQSupports("curve") else {
            throw SecurityError(
                .curveUnavailable,
                "this libzmq was built without CURVE (zmq_has(\"curve\") is false); install Debian's libzmq5, which is built with libsodium")
        }
        let file = directory.appendingPathComponent("server.key_secret")
        let certificate = try Certificate(contentsOf: file)
        guard let keys = certificate.keyPair else {
            throw SecurityError(.badCertificate, "\(file.path): no secret-key (is it the public certificate?)")
        }
        self.directory = directory
        self.serverKeys = keys
        self.current = Mutex(try AccessPolicy.load(directory: directory))
    }

    /// Makes server security from a key pair and a policy (tests).
    public init(serverKeys: CurveKeyPair, policy: AccessPolicy, directory: URL) {
        self.directory = directory
        self.serverKeys = serverKeys
        self.current = Mutex(policy)
    }

    /// The allow-lists in force.
    public var policy: AccessPolicy { current.withLock { $0 } }

    /// Reads the allow-lists again; new connections are judged by them at once, and control
    /// requests of keys no longer listed (or listed with another role) get `forbidden`.
    /// On an error the previous allow-lists stay in force.
    ///
    /// - Returns: how many keys each role has now.
    /// - Throws: `SecurityError` as ``AccessPolicy/load(directory:)``.
    @discardableResult
    public func reload() throws(SecurityError) -> [Role: Int] {
        let policy = try AccessPolicy.load(directory: directory)
        current.withLock { $0 = policy }
        return policy.keyCounts
    }

    /// Replaces the allow-lists (tests, and callers that build a policy themselves).
    public func install(_ policy: AccessPolicy) {
        current.withLock { $0 = policy }
    }

    /// Makes `socket` a CURVE server in `domain` when `endpoint` crosses a process boundary
    /// (`tcp://`, `ipc://`); `inproc://` connections skip the handshake, so they stay as
    /// they are. Call before `bind`.
    /// - Throws: `ZeroMQError` from the socket options.
    public func secure(_ socket: Socket, as domain: SocketDomain, for endpoint: String) throws {
        guard !endpoint.hasPrefix("inproc://") else { return }
        try socket.set(.curveServer(true))
        try socket.set(.curveSecretKey(serverKeys.secretKey))
        try socket.set(.zapDomain(domain.rawValue))
    }

    /// Starts the ZAP handler in `context`, then proves it refuses an unknown key: a CURVE
    /// server on a loopback port in the self-test domain, a client with a fresh key, and the
    /// handler must deny that client while nothing reaches the server (fail closed: any
    /// other outcome stops the start). Takes a few milliseconds.
    ///
    /// - Parameters:
    ///   - refuse: asked first: a reason refuses the request whatever the allow-lists say
    ///     (subscribers the event forwarder banned); `nil` leaves it to them.
    ///   - tag: asked for each request allowed: a word appended to its user id (`"<role>
    ///     <key> <tag>"`; the event forwarder's connection serial); `nil` appends nothing.
    ///   - onDecision: told of every decision (for logs); called on the handler's thread.
    /// - Throws: `SecurityError(.selfTestFailed)`, or `ZeroMQError` when the handler cannot
    ///   bind (the context has one already).
    public func startZAPHandler(
        context: Context, refuse: @escaping @Sendable (ZAPRequest) -> String? = { _ in nil },
        tag: @escaping @Sendable (ZAPRequest) -> String? = { _ in nil },
        onDecision: @escaping @Sendable (ZAPRequest, ZAPDecision) -> Void = { _, _ in }
    ) throws -> ZAPHandler {
        let handler = try ZAPHandler(context: context) { [self] request in
            var decision = refuse(request).map { ZAPDecision.deny(reason: $0) } ?? policy.decide(request)
            if case .allow(let userID) = decision, let word = tag(request) { decision = .allow(userID: "\(userID) \(word)") }
            onDecision(request, decision)
            return decision
        }
        do {
            try selfTest(context: context, handler: handler)
        } catch {
            handler.stop()
            throw error
        }
        return handler
    }

    private func selfTest(context: Context, handler: ZAPHandler) throws {
        let deniedBefore = handler.decisionCounts.denied
        let server = try Socket(.pull, context: context)
        defer { server.close() }
        try server.set(.linger(milliseconds: 0))
        try secure(server, as: .selfTest, for: "tcp://")
        try server.bind(to: "tcp://127.0.0.1:*")
        let stranger = try CurveKeyPair.generate()
        let client = try Socket(.push, context: context)
        defer { client.close() }
        try client.set(.linger(milliseconds: 0))
        try CurveClientKeys(keys: stranger, serverKey: serverKeys.publicKey).secure(client, for: "tcp://")
        try client.connect(to: try server.lastEndpoint)
        _ = try client.send([Data("self-test".utf8)], dontWait: true)
        let deadline = ContinuousClock.now.advanced(by: .seconds(2))
        let poller = Poller()
        poller.register(server, for: .readable)
        while handler.decisionCounts.denied == deniedBefore {
            if try poller.poll(timeout: .milliseconds(5)) > 0 {
                throw SecurityError(.selfTestFailed, "a CURVE client with an unknown key got a message through: ZAP is not enforced")
            }
            guard ContinuousClock.now < deadline else {
                throw SecurityError(.selfTestFailed, "the ZAP handler did not answer within 2 s: refusing to serve")
            }
        }
        if try server.receiveMessage(dontWait: true) != nil {
            throw SecurityError(.selfTestFailed, "a CURVE client with an unknown key got a message through: ZAP is not enforced")
        }
    }
}

extension AccessPolicy {
    /// How many keys each role has.
    public var keyCounts: [Role: Int] {
        var counts: [Role: Int] = [:]
        for grant in grants.values { counts[grant.role, default: 0] += 1 }
        return counts
    }
}

/// A CURVE client's keys: its own pair and the server's public key.
public struct CurveClientKeys: Sendable, Hashable {
    /// This process's key pair.
    public var keys: CurveKeyPair
    /// The coordinator's public key, 40 Z85 characters.
    public var serverKey: String

    /// Creates the value from its fields (see each property for meaning).
    public init(keys: CurveKeyPair, serverKey: String) {
        self.keys = keys
        self.serverKey = serverKey
    }

    /// Reads a secret certificate (`--key`) and the server's public certificate (`--server-key`).
    /// - Throws: `SecurityError` as `Certificate(contentsOf:)`, or `.badCertificate` when
    ///   `key` holds no secret key.
    public init(keyFile: URL, serverKeyFile: URL) throws(SecurityError) {
        let own = try Certificate(contentsOf: keyFile)
        guard let keys = own.keyPair else {
            throw SecurityError(.badCertificate, "\(keyFile.path): no secret-key (give the .key_secret file)")
        }
        self.init(keys: keys, serverKey: try Certificate(contentsOf: serverKeyFile).publicKey)
    }

    /// Makes `socket` a CURVE client of the server when `endpoint` is not `inproc://`. Call
    /// before `connect`.
    /// - Throws: `ZeroMQError` from the socket options.
    public func secure(_ socket: Socket, for endpoint: String) throws {
        guard !endpoint.hasPrefix("inproc://") else { return }
        try socket.set(.curveServerKey(serverKey))
        try socket.set(.curvePublicKey(keys.publicKey))
        try socket.set(.curveSecretKey(keys.secretKey))
    }
}
