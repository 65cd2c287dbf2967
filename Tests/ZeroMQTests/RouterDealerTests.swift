import Foundation
import Testing
import ZeroMQ

@Suite struct RouterDealerTests {
    @Test func routerDealerRoundTripKeepsTheRoutingID() throws {
        let context = try Context()
        let router = try Socket(.router, context: context)
        try router.set(.receiveTimeout(milliseconds: 5000))
        try router.bind(to: "tcp://127.0.0.1:*")
        let dealer = try Socket(.dealer, context: context)
        try dealer.set(.routingID(Data("worker-7".utf8)))
        try dealer.set(.receiveTimeout(milliseconds: 5000))
        try dealer.connect(to: try router.lastEndpoint)
        #expect(try dealer.routingID == Data("worker-7".utf8))

        try dealer.send(frames("", "ping"))
        let request = try #require(try router.receiveMessage())
        #expect(request == frames("worker-7", "", "ping"))

        try router.send([request[0], Data(), Data("pong".utf8)])
        #expect(try dealer.receiveMessage() == frames("", "pong"))
    }

    @Test func routerMandatoryRejectsAnUnknownRoutingID() throws {
        let context = try Context()
        let router = try Socket(.router, context: context)
        try router.set(.routerMandatory(true))
        try router.bind(to: "inproc://mandatory")

        let error = try #require(throws: ZeroMQError.self) {
            try router.send(frames("nobody", "hello"))
        }
        #expect(error.code == .hostUnreachable)
    }

    @Test func requestSocketRejectsASecondRequestBeforeTheReply() throws {
        let context = try Context()
        let reply = try Socket(.reply, context: context)
        try reply.bind(to: "inproc://service")
        let request = try Socket(.request, context: context)
        try request.connect(to: "inproc://service")
        try request.send(frames("first"))

        #expect(throws: ZeroMQError(code: .invalidState, operation: "zmq_send")) {
            try request.send(frames("second"))
        }
    }
}
