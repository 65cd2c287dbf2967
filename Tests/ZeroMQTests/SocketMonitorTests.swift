import Foundation
import Testing
import ZeroMQ

/// `zmq_socket_monitor` through `Socket.monitor(at:events:)`, and the total decoder of its messages.
@Suite struct SocketMonitorTests {
    @Test func aDisconnectIsReportedWithItsEndpoint() throws {
        let context = try Context()
        defer { context.shutdown() }
        let server = try Socket(.xpublisher, context: context)
        try server.set(.linger(milliseconds: 0))
        try server.bind(to: "tcp://127.0.0.1:*")
        let endpoint = try server.lastEndpoint
        try server.monitor(at: "inproc://monitor-test", events: [.accepted, .disconnected])
        let monitor = try Socket(.pair, context: context)
        try monitor.set(.linger(milliseconds: 0))
        try monitor.set(.receiveTimeout(milliseconds: 5000))
        try monitor.connect(to: "inproc://monitor-test")

        let client = try Socket(.subscriber, context: context)
        try client.set(.linger(milliseconds: 0))
        try client.connect(to: endpoint)
        let frames = try #require(try monitor.receiveMessage())
        let accepted = try #require(SocketMonitorEvent(frames: frames))
        #expect(accepted.kind == .accepted)
        #expect(accepted.endpoint == endpoint)
        client.close()
        // The server learns of the closed connection on its next command processing.
        var disconnected: SocketMonitorEvent?
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while disconnected == nil, ContinuousClock.now < deadline {
            _ = try server.receiveMessage(dontWait: true)
            if let frames = try monitor.receiveMessage(), let event = SocketMonitorEvent(frames: frames), event.kind == .disconnected {
                disconnected = event
            }
        }
        #expect(disconnected?.endpoint == endpoint)
    }

    @Test func garbageIsNoEvent() {
        var generator = SystemRandomNumberGenerator()
        #expect(SocketMonitorEvent(frames: []) == nil)
        #expect(SocketMonitorEvent(frames: [Data(count: 6)]) == nil)
        #expect(SocketMonitorEvent(frames: [Data(count: 5), Data()]) == nil)
        #expect(SocketMonitorEvent(frames: [Data(count: 7), Data()]) == nil)
        #expect(SocketMonitorEvent(frames: [Data([0, 2, 1, 0, 0, 0]), Data("tcp://x".utf8)])
            == SocketMonitorEvent(kind: SocketMonitorEvent.Kinds(rawValue: 0x200), value: 1, endpoint: "tcp://x"))
        for _ in 0..<1_000 {
            let frames = (0..<Int.random(in: 0...3, using: &generator)).map { _ in
                Data((0..<Int.random(in: 0...8, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            }
            if let event = SocketMonitorEvent(frames: frames) {
                #expect(frames.count == 2 && frames[0].count == 6 && event.endpoint.utf8.count <= frames[1].count * 3)
            }
        }
    }
}
