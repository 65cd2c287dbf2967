import Foundation
import Testing
import ZeroMQ

@Suite struct ErrorTests {
    @Test func bindingAnAddressInUseThrowsAddressInUse() throws {
        let context = try Context()
        let first = try Socket(.pull, context: context)
        try first.bind(to: "tcp://127.0.0.1:*")
        let endpoint = try first.lastEndpoint
        let second = try Socket(.pull, context: context)

        let error = try #require(throws: ZeroMQError.self) {
            try second.bind(to: endpoint)
        }
        #expect(error.code == .addressInUse)
        #expect(error.operation == "zmq_bind")
        #expect(error.endpoint == endpoint)
        #expect(!error.message.isEmpty)
        #expect(error.description == "zmq_bind \(endpoint): \(error.message) (errno \(error.code.rawValue))")
    }

    @Test(arguments: ["carrier-pigeon://coop", "no-transport-here", "tcp://127.0.0.1:port", "tcp://"])
    func badEndpointThrowsInvalidArgumentOrProtocolNotSupported(_ endpoint: String) throws {
        let context = try Context()
        let socket = try Socket(.pull, context: context)

        let error = try #require(throws: ZeroMQError.self) {
            try socket.bind(to: endpoint)
        }
        #expect([.invalidArgument, .protocolNotSupported].contains(error.code), "\(error)")
        #expect(error.endpoint == endpoint)
    }

    @Test func bindingToAnUnknownInterfaceThrowsNoDevice() throws {
        let context = try Context()
        let socket = try Socket(.pull, context: context)

        #expect(throws: ZeroMQError(code: .noDevice, operation: "zmq_bind")) {
            try socket.bind(to: "tcp://no-such-interface0:*")
        }
    }

    @Test func disconnectingTwiceThrowsEndpointNotFound() throws {
        let context = try Context()
        let socket = try Socket(.push, context: context)
        try socket.connect(to: "inproc://elsewhere")

        try socket.disconnect(from: "inproc://elsewhere")

        #expect(throws: ZeroMQError(code: .endpointNotFound, operation: "zmq_disconnect")) {
            try socket.disconnect(from: "inproc://elsewhere")
        }
    }

    @Test func unbindingAnEndpointNeverBoundThrowsEndpointNotFound() throws {
        let context = try Context()
        let socket = try Socket(.pull, context: context)

        #expect(throws: ZeroMQError(code: .endpointNotFound, operation: "zmq_unbind")) {
            try socket.unbind(from: "inproc://never-bound")
        }
    }

    @Test func errorsAreEqualWhenTheirCodesAre() {
        let bind = ZeroMQError(code: .addressInUse, operation: "zmq_bind", endpoint: "tcp://a:1")
        let other = ZeroMQError(code: .addressInUse, operation: "zmq_connect")
        #expect(bind == other)
        #expect(bind != ZeroMQError(code: .invalidArgument, operation: "zmq_bind"))
        #expect(ZeroMQError(code: .contextTerminated, operation: "zmq_msg_recv").message == "Context was terminated")
    }
}
