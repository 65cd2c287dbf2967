import Foundation
import Testing
import ZeroMQ

@Suite struct ContextTests {
    @Test func shutdownUnblocksABlockingReceiveOnAnotherThread() throws {
        let context = try Context()
        let listening = Mailbox<Bool>()
        let receiver = TestThread.start(named: "receiver") {
            let pull = try Socket(.pull, context: context)
            try pull.bind(to: "inproc://quiet")
            listening.put(true)
            // No timeout: only the shutdown below can end this receive.
            _ = try pull.receiveMessage()
        }
        try #require(listening.take(timeout: .seconds(5)) == true)

        context.shutdown()

        #expect(receiver.join(timeout: .seconds(5)))
        #expect((receiver.error as? ZeroMQError)?.code == .contextTerminated)
    }

    @Test func socketsCannotBeCreatedAfterShutdown() throws {
        let context = try Context()
        context.shutdown()

        #expect(throws: ZeroMQError(code: .contextTerminated, operation: "zmq_socket")) {
            try Socket(.push, context: context)
        }
    }

    @Test func closingASocketTwiceIsHarmless() throws {
        let context = try Context()
        let socket = try Socket(.pair, context: context)
        #expect(!socket.isClosed)

        socket.close()
        socket.close()

        #expect(socket.isClosed)
    }

    @Test func libraryIsVersionFourWithIPC() {
        #expect(zeroMQVersion.major == 4)
        #expect(zeroMQVersion.minor >= 3)
        #expect(zeroMQSupports("ipc"))
    }
}
