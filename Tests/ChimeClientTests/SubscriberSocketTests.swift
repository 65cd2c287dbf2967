import ChimeClient
import ChimeRuntime
import Foundation
import Synchronization
import Testing
import ZeroMQ

@Suite struct SubscriberSocketTests {
    /// A publisher sends on three topics; the factory's socket gets the two it subscribed
    /// to (by prefix), in order.
    @Test func subscribesToEachTopicByPrefix() throws {
        let context = try Context()
        defer { context.shutdown() }
        let publisher = try Socket(.publisher, context: context)
        defer { publisher.close() }
        try publisher.set(.linger(milliseconds: 0))
        try publisher.bind(to: "inproc://subscriber-socket-test")
        let subscriber = try SubscriberSocket.make(
            endpoint: "inproc://subscriber-socket-test", topics: ["badge.", "fire.al"], highWaterMark: 10, curve: nil,
            context: context)
        defer { subscriber.close() }
        // A SUB's subscription reaches the PUB asynchronously: publish probes until one arrives.
        var first: [Data]?
        for _ in 0..<500 where first == nil {
            _ = try publisher.send([Data("fire.alice".utf8), Data("probe".utf8)], dontWait: true)
            try subscriber.set(.receiveTimeout(milliseconds: 10))
            first = try subscriber.receiveMessage()
        }
        #expect(first == [Data("fire.alice".utf8), Data("probe".utf8)])
        try subscriber.set(.receiveTimeout(milliseconds: 5000))
        while let _ = try subscriberReceive(subscriber, timeout: 50) {}
        for topic in ["action.alice", "badge.bob", "fire.bob", "fire.alice"] {
            _ = try publisher.send([Data(topic.utf8), Data("x".utf8)], dontWait: true)
        }
        #expect(try subscriber.receiveMessage()?.first == Data("badge.bob".utf8))
        #expect(try subscriber.receiveMessage()?.first == Data("fire.alice".utf8))
        #expect(try subscriberReceive(subscriber, timeout: 100) == nil, "action.alice and fire.bob were not subscribed to")
    }

    /// In a context of its own, the stop signal ends a blocking receive.
    @Test func theStopSignalEndsABlockingReceive() throws {
        let stop = StopSignal()
        let outcome = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let socket = try SubscriberSocket.make(
            endpoint: "tcp://127.0.0.1:9", topics: [""], highWaterMark: nil, curve: nil, stop: stop)
        let box = UncheckedSocket(socket)
        Thread.detachNewThread {
            do {
                _ = try box.socket.receiveMessage()
                outcome.withLock { $0 = "received" }
            } catch let error as ZeroMQError {
                outcome.withLock { $0 = error.code == .contextTerminated ? "terminated" : "\(error)" }
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
            box.socket.close()
            done.signal()
        }
        stop.requestStop()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(outcome.withLock { $0 } == "terminated")
    }

    private func subscriberReceive(_ socket: Socket, timeout milliseconds: Int32) throws -> [Data]? {
        try socket.set(.receiveTimeout(milliseconds: milliseconds))
        defer { try? socket.set(.receiveTimeout(milliseconds: 5000)) }
        return try socket.receiveMessage()
    }
}

/// Hands the socket to the one thread that uses it from then on: the test's thread only
/// makes it and never touches it again, so no two threads use it (zmq_socket(3)).
private final class UncheckedSocket: @unchecked Sendable {
    let socket: Socket
    init(_ socket: Socket) { self.socket = socket }
}
