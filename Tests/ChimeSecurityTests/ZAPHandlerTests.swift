import ChimeTestSupport
import Foundation
import Testing
import ZeroMQ
@testable import ChimeSecurity


/// The ZAP handler over real CURVE connections on loopback: who gets in, with which user id,
/// and what a reload changes.
@Suite(.enabled(if: zeroMQSupports("curve"), "libzmq built without CURVE"))
struct ZAPHandlerTests {
    let server: CurveKeyPair
    let operatorKeys: CurveKeyPair
    let clientKeys: CurveKeyPair
    let workerKeys: CurveKeyPair

    init() throws {
        server = try CurveKeyPair.generate()
        operatorKeys = try CurveKeyPair.generate()
        clientKeys = try CurveKeyPair.generate()
        workerKeys = try CurveKeyPair.generate()
    }

    var policy: AccessPolicy {
        AccessPolicy(grants: [
            operatorKeys.publicKey: .init(role: .operator, name: "operator"),
            clientKeys.publicKey: .init(role: .client, scope: RecipientScope(prefixes: ["a-"]), name: "client"),
            workerKeys.publicKey: .init(role: .worker, name: "worker"),
        ])
    }

    /// A ROUTER in `domain` on a loopback port, secured by `security`.
    func makeServer(_ security: ServerSecurity, domain: SocketDomain, context: Context) throws -> Socket {
        let router = try Socket(.router, context: context)
        try router.set(.linger(milliseconds: 0))
        try router.set(.receiveTimeout(milliseconds: 5000))
        try security.secure(router, as: domain, for: "tcp://")
        try router.bind(to: "tcp://127.0.0.1:*")
        return router
    }

    func makeClient(_ keys: CurveKeyPair, to router: Socket, context: Context) throws -> Socket {
        let dealer = try Socket(.dealer, context: context)
        try dealer.set(.linger(milliseconds: 0))
        try CurveClientKeys(keys: keys, serverKey: server.publicKey).secure(dealer, for: "tcp://")
        try dealer.connect(to: try router.lastEndpoint)
        return dealer
    }

    @Test func anAllowedKeyGetsInAndItsMessagesCarryItsRole() throws {
        let context = try Context()
        let security = ServerSecurity(serverKeys: server, policy: policy, directory: URL(fileURLWithPath: "/nonexistent"))
        let handler = try security.startZAPHandler(context: context)
        defer { handler.stop() }
        let router = try makeServer(security, domain: .control, context: context)
        let dealer = try makeClient(clientKeys, to: router, context: context)

        try dealer.send([Data("hello".utf8)])
        let received = try #require(try router.receiveMessage(property: MessageProperty.userID))

        #expect(received.frames.last == Data("hello".utf8))
        #expect(received.property == "client \(clientKeys.publicKey)")
        #expect(Principal(userID: try #require(received.property)) == Principal(role: .client, publicKey: clientKeys.publicKey))
    }

    @Test func anUnknownKeyGetsNothingThrough() throws {
        let context = try Context()
        let security = ServerSecurity(serverKeys: server, policy: policy, directory: URL(fileURLWithPath: "/nonexistent"))
        let handler = try security.startZAPHandler(context: context)
        defer { handler.stop() }
        let deniedAfterSelfTest = handler.decisionCounts.denied
        let router = try makeServer(security, domain: .control, context: context)
        try router.set(.receiveTimeout(milliseconds: 300))
        let stranger = try makeClient(try CurveKeyPair.generate(), to: router, context: context)

        _ = try stranger.send([Data("let me in".utf8)], dontWait: true)

        try expectEventually(timeout: 5, "the handler denies the stranger") {
            handler.decisionCounts.denied == deniedAfterSelfTest + 1
        }
        #expect(try router.receiveMessage() == nil)
        #expect(handler.decisionCounts.allowed == 0)
    }

    @Test func aWorkerKeyIsRefusedOnTheEventStreamButAdmittedOnDispatch() throws {
        let context = try Context()
        let security = ServerSecurity(serverKeys: server, policy: policy, directory: URL(fileURLWithPath: "/nonexistent"))
        let handler = try security.startZAPHandler(context: context)
        defer { handler.stop() }
        let events = try makeServer(security, domain: .events, context: context)
        try events.set(.receiveTimeout(milliseconds: 300))
        let dispatch = try makeServer(security, domain: .dispatch, context: context)

        let intruder = try makeClient(workerKeys, to: events, context: context)
        let worker = try makeClient(workerKeys, to: dispatch, context: context)
        _ = try intruder.send([Data("x".utf8)], dontWait: true)
        try worker.send([Data("y".utf8)])

        #expect(try dispatch.receiveMessage(property: MessageProperty.userID)?.property == "worker \(workerKeys.publicKey)")
        #expect(try events.receiveMessage() == nil)
    }

    @Test(arguments: [
        (Role.operator, SocketDomain.control, true), (.operator, .events, true), (.operator, .dispatch, false),
        (.client, .control, true), (.client, .results, false), (.worker, .control, true), (.worker, .dispatch, true),
        (.worker, .results, true), (.worker, .eventsIngest, true), (.worker, .events, false),
        (.subscriber, .events, true), (.subscriber, .control, true), (.subscriber, .eventsIngest, false),
        (.subscriber, .dispatch, false), (.operator, .selfTest, false),
    ])
    func rolesMapToTheSocketsTheyMayReach(role: Role, domain: SocketDomain, isAllowed: Bool) throws {
        let key = try CurveKeyPair.generate().publicKey
        let policy = AccessPolicy(grants: [key: .init(role: role, name: "k")])
        let request = ZAPRequest(
            domain: domain.rawValue, address: "127.0.0.1", identity: Data(), mechanism: "CURVE",
            credentials: [Data(try #require(Z85.decode(key)))])

        let decision = policy.decide(request)
        if isAllowed {
            #expect(decision == .allow(userID: "\(role.rawValue) \(key)"))
        } else if case .allow = decision {
            Issue.record("\(role) admitted on \(domain)")
        }
    }

    @Test func aRestrictedClientMayNotSubscribeToEveryEventAndOtherMechanismsAreRefused() throws {
        let request = ZAPRequest(
            domain: SocketDomain.events.rawValue, address: "127.0.0.1", identity: Data(), mechanism: "CURVE",
            credentials: [Data(try #require(Z85.decode(clientKeys.publicKey)))])
        #expect(policy.decide(request) == .deny(reason: "a client restricted to some recipients may not subscribe to every event"))

        let plain = ZAPRequest(domain: SocketDomain.control.rawValue, address: "", identity: Data(), mechanism: "PLAIN", credentials: [])
        #expect(policy.decide(plain) == .deny(reason: "mechanism PLAIN refused: CURVE only"))
        var unknownDomain = request
        unknownDomain.domain = "other"
        #expect(policy.decide(unknownDomain) == .deny(reason: "unknown ZAP domain 'other'"))
    }

    @Test func aReloadAdmitsAnAddedKeyAndDropsARemovedOne() throws {
        let directory = try TemporaryDirectory(prefix: "keys")
        let keys = directory.url.appendingPathComponent("keys")
        try KeyDirectory.initialize(at: keys)
        let security = try ServerSecurity(directory: keys)
        #expect(security.policy.keyCounts == [.operator: 1, .client: 1, .worker: 1, .subscriber: 1])
        let context = try Context()
        let handler = try security.startZAPHandler(context: context)
        defer { handler.stop() }

        try KeyDirectory.add(role: .client, name: "alice", scope: RecipientScope(recipients: ["alice"]), to: keys)
        let alice = try #require(try Certificate(contentsOf: keys.appendingPathComponent("alice.key_secret")).keyPair)
        #expect(security.policy.grants[alice.publicKey] == nil)
        #expect(try security.reload() == [.operator: 1, .client: 2, .worker: 1, .subscriber: 1])
        #expect(security.policy.grants[alice.publicKey] == .init(role: .client, scope: RecipientScope(recipients: ["alice"]), name: "client/alice.key"))

        let router = try makeServer(security, domain: .control, context: context)
        let admitted = try Socket(.dealer, context: context)
        try admitted.set(.linger(milliseconds: 0))
        try CurveClientKeys(keys: alice, serverKey: security.serverKeys.publicKey).secure(admitted, for: "tcp://")
        try admitted.connect(to: try router.lastEndpoint)
        try admitted.send([Data("after reload".utf8)])
        #expect(try router.receiveMessage(property: MessageProperty.userID)?.property == "client \(alice.publicKey)")

        try FileManager.default.removeItem(at: keys.appendingPathComponent("client/alice.key"))
        try security.reload()
        #expect(security.policy.grants[alice.publicKey] == nil)
    }

    @Test func aSecondHandlerInOneContextIsRefused() throws {
        let context = try Context()
        let security = ServerSecurity(serverKeys: server, policy: policy, directory: URL(fileURLWithPath: "/nonexistent"))
        let handler = try security.startZAPHandler(context: context)
        defer { handler.stop() }

        #expect(throws: ZeroMQError(code: .addressInUse, operation: "zmq_bind")) {
            _ = try ZAPHandler(context: context) { _ in .deny(reason: "second") }
        }
    }
}
