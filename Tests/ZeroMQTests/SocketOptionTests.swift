import Foundation
import Testing
import ZeroMQ

@Suite struct SocketOptionTests {
    static let settings: [(SocketKind, SocketOption)] = [
        (.push, .linger(milliseconds: 250)),
        (.push, .sendHighWaterMark(10)),
        (.pull, .receiveHighWaterMark(10)),
        (.push, .immediate(true)),
        (.subscriber, .subscribe(prefix: "fire.")),
        (.subscriber, .unsubscribe(prefix: "fire.")),
        (.dealer, .routingID(Data("worker-1".utf8))),
        (.dealer, .heartbeatInterval(milliseconds: 1000)),
        (.dealer, .heartbeatTimeout(milliseconds: 3000)),
        (.dealer, .heartbeatTTL(milliseconds: 5000)),
        (.pull, .maxMessageSize(bytes: 1 << 20)),
        (.dealer, .reconnectInterval(milliseconds: 100)),
        (.dealer, .reconnectIntervalMax(milliseconds: 5000)),
        (.push, .sendTimeout(milliseconds: 1000)),
        (.pull, .receiveTimeout(milliseconds: 1000)),
        (.router, .routerMandatory(true)),
        (.xpublisher, .xpubVerbose(true)),
        (.push, .tcpKeepalive(true)),
        (.push, .ipv6(true)),
        (.pull, .curveServer(true)),
    ]

    @Test(arguments: settings)
    func libzmqAcceptsTheOption(on kind: SocketKind, _ option: SocketOption) throws {
        let context = try Context()
        let socket = try Socket(kind, context: context)

        try socket.set(option)
    }

    @Test func malformedCurveKeyThrowsInvalidArgument() throws {
        let context = try Context()
        let socket = try Socket(.push, context: context)

        let error = try #require(throws: ZeroMQError.self) {
            try socket.set(.curveServerKey("too short"))
        }
        #expect(error.code == .invalidArgument)
        #expect(error.operation == "zmq_setsockopt ZMQ_CURVE_SERVERKEY")
    }

    @Test func maxMessageSizeMakesTheReceiverDropAnOversizedMessage() throws {
        let context = try Context()
        let pull = try Socket(.pull, context: context)
        try pull.set(.maxMessageSize(bytes: 64))
        try pull.set(.receiveTimeout(milliseconds: 5000))
        try pull.bind(to: "tcp://127.0.0.1:*")
        let push = try Socket(.push, context: context)
        try push.connect(to: try pull.lastEndpoint)

        try push.send(frames("small enough"))
        #expect(try pull.receiveMessage() == frames("small enough"))

        // The receiver drops the whole connection on the oversized frame, so it never arrives.
        try pull.set(.receiveTimeout(milliseconds: 300))
        try push.send([Data(count: 1024)])
        #expect(try pull.receiveMessage() == nil)
    }

    @Test func lastEndpointResolvesTheWildcardPort() throws {
        let context = try Context()
        let socket = try Socket(.pull, context: context)
        #expect(try socket.lastEndpoint == "")

        try socket.bind(to: "tcp://127.0.0.1:*")

        let endpoint = try socket.lastEndpoint
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
        #expect(Int(endpoint.dropFirst("tcp://127.0.0.1:".count)) != nil)
    }
}
