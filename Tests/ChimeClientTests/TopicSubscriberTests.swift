import ChimeRuntime
import Foundation
import Synchronization
import Testing
import ZeroMQ

@testable import ChimeClient

/// One `TopicSubscriber` over several events endpoints (a SUB socket each, one poll): each
/// event comes with the index of the endpoint that published it, in that endpoint's order.
@Suite struct TopicSubscriberTests {
    @Test func eachEventNamesTheEndpointItCameFromInThatEndpointsOrder() throws {
        let context = try Context()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-ts-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var publishers: [Socket] = []
        defer { for socket in publishers { socket.close() } }
        for index in 0..<3 {
            let socket = try Socket(.xpublisher, context: context)
            try socket.set(.linger(milliseconds: 0))
            try socket.bind(to: "ipc://\(directory.path)/events-\(index)")
            publishers.append(socket)
        }
        let stop = StopSignal()
        let received = Mutex<[(index: Int, topic: String, body: String)]>([])
        let ended = DispatchSemaphore(value: 0)
        let endpoints = (0..<3).map { "ipc://\(directory.path)/events-\($0)" }
        let thread = Thread {
            defer { ended.signal() }
            // Made on its thread: a subscriber is used by one thread only.
            let subscriber = TopicSubscriber(endpoints: endpoints, prefix: "badge.", recipient: nil, stop: stop)
            try? subscriber.run(onEndpointMessage: { index, topic, raw in
                received.withLock { $0.append((index, topic, String(decoding: raw, as: UTF8.self))) }
            })
        }
        thread.start()
        // Every endpoint's subscription arrives (the XPUB passes it up) before it publishes.
        for (index, publisher) in publishers.enumerated() {
            let poller = Poller()
            poller.register(publisher, for: .readable)
            let deadline = Date().addingTimeInterval(5)
            var subscribed = false
            while !subscribed, Date() < deadline {
                if try poller.poll(timeout: .milliseconds(50)) > 0, let frames = try publisher.receiveMessage(dontWait: true) {
                    subscribed = frames.first == Data([1]) + Data("badge.".utf8)
                }
            }
            #expect(subscribed, "endpoint \(index) subscribed to badge.")
        }
        for round in 1...3 {
            for (index, publisher) in publishers.enumerated().reversed() {
                _ = try publisher.send([Data("badge.r\(index)".utf8), Data("\(round)".utf8)], dontWait: false)
            }
        }
        _ = try publishers[1].send([Data("action.r1".utf8), Data("not subscribed".utf8)], dontWait: false)
        let deadline = Date().addingTimeInterval(5)
        while received.withLock({ $0.count }) < 9, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        stop.requestStop()
        #expect(ended.wait(timeout: .now() + 2) == .success, "the stop ends the subscription")
        let got = received.withLock { $0 }
        #expect(got.count == 9)
        for index in 0..<3 {
            let mine = got.filter { $0.index == index }
            #expect(mine.map(\.topic) == Array(repeating: "badge.r\(index)", count: 3))
            #expect(mine.map(\.body) == ["1", "2", "3"], "endpoint \(index)'s events in its order")
        }
    }
}
