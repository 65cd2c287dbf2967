import Foundation
import Testing
import ZeroMQ

@Suite struct ProxyTests {
    @Test func forwarderDeliversOnlySubscribedTopicsUntilTerminated() throws {
        let context = try Context()
        // Unblocks the forwarder thread if an expectation below fails early.
        defer { context.shutdown() }
        let boundEndpoints = Mailbox<[String]>()
        let forwarder = TestThread.start(named: "forwarder") {
            let frontend = try Socket(.xsubscriber, context: context)
            let backend = try Socket(.xpublisher, context: context)
            let control = try Socket(.pair, context: context)
            try frontend.bind(to: "tcp://127.0.0.1:*")
            try backend.bind(to: "tcp://127.0.0.1:*")
            try control.bind(to: "inproc://forwarder-control")
            boundEndpoints.put([try frontend.lastEndpoint, try backend.lastEndpoint])
            try proxySteerable(frontend: frontend, backend: backend, control: control)
        }
        let endpoints = try #require(
            boundEndpoints.take(timeout: .seconds(5)),
            "forwarder did not bind: \(String(describing: forwarder.error))"
        )

        // An XPUB publisher receives the subscription once it has crossed the forwarder,
        // which proves the whole path is ready: no sleeping for the slow joiner.
        let publisher = try Socket(.xpublisher, context: context)
        try publisher.set(.receiveTimeout(milliseconds: 5000))
        try publisher.connect(to: endpoints[0])
        let subscriber = try Socket(.subscriber, context: context)
        try subscriber.set(.receiveTimeout(milliseconds: 5000))
        try subscriber.set(.subscribe(prefix: "fire."))
        try subscriber.connect(to: endpoints[1])
        #expect(try publisher.receiveMessage() == [Data([1]) + Data("fire.".utf8)])

        try publisher.send(frames("badge.alice", "3"))
        try publisher.send(frames("fire.r1", "payload"))
        // Both messages share one path, so receiving the second first proves the first was filtered.
        #expect(try subscriber.receiveMessage() == frames("fire.r1", "payload"))
        #expect(try subscriber.receiveMessage(dontWait: true) == nil)

        let control = try Socket(.pair, context: context)
        try control.connect(to: "inproc://forwarder-control")
        try control.send(ProxyCommand.terminate.frame)
        #expect(forwarder.join(timeout: .seconds(5)))
        #expect(forwarder.error == nil)
    }

    @Test func streamerForwardsUntilTheContextShutsDown() throws {
        let context = try Context()
        defer { context.shutdown() }
        let ready = Mailbox<Bool>()
        let streamer = TestThread.start(named: "streamer") {
            let frontend = try Socket(.pull, context: context)
            let backend = try Socket(.push, context: context)
            try frontend.bind(to: "inproc://streamer-in")
            try backend.bind(to: "inproc://streamer-out")
            ready.put(true)
            try proxy(frontend: frontend, backend: backend)
        }
        try #require(ready.take(timeout: .seconds(5)) == true)

        let producer = try Socket(.push, context: context)
        try producer.connect(to: "inproc://streamer-in")
        let consumer = try Socket(.pull, context: context)
        try consumer.set(.receiveTimeout(milliseconds: 5000))
        try consumer.connect(to: "inproc://streamer-out")
        try producer.send(frames("job", "42"))
        #expect(try consumer.receiveMessage() == frames("job", "42"))

        context.shutdown()
        #expect(streamer.join(timeout: .seconds(5)))
        #expect((streamer.error as? ZeroMQError)?.code == .contextTerminated)
    }
}
