import Foundation
import Testing
import ZeroMQ

@Suite struct PollerTests {
    @Test func pollTimesOutAfterTheTimeoutWithNothingReady() throws {
        let context = try Context()
        let pull = try Socket(.pull, context: context)
        try pull.bind(to: "inproc://idle")
        let poller = Poller()
        let index = poller.register(pull, for: .readable)

        let clock = ContinuousClock()
        let start = clock.now
        let ready = try poller.poll(timeout: .milliseconds(150))
        let elapsed = start.duration(to: clock.now)

        #expect(ready == 0)
        #expect(poller.events(at: index).isEmpty)
        #expect(elapsed >= .milliseconds(150))
        #expect(elapsed < .seconds(2))
    }

    @Test func pollNeverEndsBeforeASubMillisecondTimeout() throws {
        let context = try Context()
        let pull = try Socket(.pull, context: context)
        try pull.bind(to: "inproc://idle")
        let poller = Poller()
        poller.register(pull, for: .readable)

        let clock = ContinuousClock()
        let start = clock.now
        #expect(try poller.poll(timeout: .microseconds(1500)) == 0)
        #expect(start.duration(to: clock.now) >= .microseconds(1500))
    }

    @Test func pollReportsOnlyTheReadySockets() throws {
        let context = try Context()
        let busy = try Socket(.pull, context: context)
        try busy.bind(to: "inproc://busy")
        let idle = try Socket(.pull, context: context)
        try idle.bind(to: "inproc://idle")
        let push = try Socket(.push, context: context)
        try push.connect(to: "inproc://busy")
        let poller = Poller()
        let busyIndex = poller.register(busy, for: .readable)
        let idleIndex = poller.register(idle, for: .readable)
        let pushIndex = poller.register(push, for: .writable)

        try push.send(frames("wake up"))

        #expect(try poller.poll(timeout: .seconds(5)) >= 2)
        #expect(poller.events(at: busyIndex) == .readable)
        #expect(poller.events(at: idleIndex).isEmpty)
        #expect(poller.events(at: pushIndex) == .writable)
        #expect(try busy.events.contains(.readable))
        #expect(try busy.receiveMessage(dontWait: true) == frames("wake up"))
    }

    @Test func pollThrowsContextTerminatedAfterShutdown() throws {
        let context = try Context()
        let pull = try Socket(.pull, context: context)
        try pull.bind(to: "inproc://idle")
        let poller = Poller()
        poller.register(pull, for: .readable)
        context.shutdown()

        #expect(throws: ZeroMQError(code: .contextTerminated, operation: "zmq_poll")) {
            try poller.poll(timeout: .seconds(5))
        }
    }
}
