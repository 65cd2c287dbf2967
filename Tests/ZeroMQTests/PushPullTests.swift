import Foundation
import Testing
import ZeroMQ

@Suite struct PushPullTests {
    static let endpoints = [
        "inproc://pipeline",
        "tcp://127.0.0.1:*",
        "ipc://\(NSTemporaryDirectory())zeromq-tests-\(UUID().uuidString).sock",
    ]

    @Test(arguments: endpoints)
    func pushPullCarriesMultipartMessages(over endpoint: String) throws {
        let context = try Context()
        let pull = try Socket(.pull, context: context)
        try pull.set(.receiveTimeout(milliseconds: 5000))
        try pull.bind(to: endpoint)
        let push = try Socket(.push, context: context)
        try push.connect(to: try pull.lastEndpoint)

        // Empty, small (stored inside zmq_msg_t) and large (heap) frames.
        let large = Data((0..<1_000_000).map { UInt8(truncatingIfNeeded: $0) })
        let message = [Data("header".utf8), Data(), large]
        #expect(try push.send(message))
        #expect(try push.send(frames("second")))

        #expect(try pull.receiveMessage() == message)
        #expect(try pull.receiveMessage() == frames("second"))
    }

    @Test func receiveFrameReportsMoreUntilTheLastFrame() throws {
        let context = try Context()
        let pull = try Socket(.pull, context: context)
        try pull.set(.receiveTimeout(milliseconds: 5000))
        try pull.bind(to: "inproc://frames")
        let push = try Socket(.push, context: context)
        try push.connect(to: "inproc://frames")

        try push.send(Data("a".utf8), more: true)
        try push.send(Data("b".utf8))

        let first = try #require(try pull.receiveFrame())
        #expect(first.0 == Data("a".utf8))
        #expect(first.more)
        #expect(try pull.hasMore)
        let second = try #require(try pull.receiveFrame())
        #expect(second.0 == Data("b".utf8))
        #expect(!second.more)
        #expect(try !pull.hasMore)
    }

    @Test func dontWaitReceiveWithNothingQueuedReturnsNil() throws {
        let context = try Context()
        let pull = try Socket(.pull, context: context)
        try pull.bind(to: "inproc://empty")

        #expect(try pull.receiveMessage(dontWait: true) == nil)
        #expect(try pull.receiveFrame(dontWait: true) == nil)
    }

    @Test func dontWaitSendOnImmediatePushWithoutPeerReturnsFalse() throws {
        let context = try Context()
        let deadEndpoint = try unusedTCPEndpoint(context: context)

        let immediate = try Socket(.push, context: context)
        try immediate.set(.immediate(true))
        try immediate.connect(to: deadEndpoint)
        #expect(try !immediate.send(frames("firing"), dontWait: true))

        // Without IMMEDIATE libzmq queues into the pipe of the pending connection.
        let queueing = try Socket(.push, context: context)
        try queueing.set(.linger(milliseconds: 0))
        try queueing.connect(to: deadEndpoint)
        #expect(try queueing.send(frames("firing"), dontWait: true))
    }

    @Test func blockingSendReturnsFalseWhenSendTimeoutElapses() throws {
        let context = try Context()
        let push = try Socket(.push, context: context)
        try push.set(.sendTimeout(milliseconds: 50))

        #expect(try !push.send(frames("nobody listens")))
    }

    /// A loopback endpoint nothing listens on: bound to a free port, then released.
    private func unusedTCPEndpoint(context: Context) throws -> String {
        let probe = try Socket(.pull, context: context)
        try probe.bind(to: "tcp://127.0.0.1:*")
        let endpoint = try probe.lastEndpoint
        try probe.unbind(from: endpoint)
        probe.close()
        return endpoint
    }
}
