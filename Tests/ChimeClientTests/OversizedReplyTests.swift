import ChimeClient
import ChimeCore
import ChimeWire
import Foundation
import Testing
import ZeroMQ

/// Client sockets bound what they receive (`ZMQ_MAXMSGSIZE`): a stand-in peer sending a frame
/// over the bound gets its connection dropped, and the client ends with an error, not an
/// allocation of whatever the peer claimed.
@Suite struct OversizedReplyTests {
    /// A reply of `bytes` bytes: an `ok` reply padded with a string.
    static func reply(_ request: ControlRequest, bytes: Int) -> Data {
        let head = #"{"ok":true,"requestId":"\#(request.requestId ?? "")","result":{"pad":""#
        let tail = #""}}"#
        return Data((head + String(repeating: "x", count: max(0, bytes - head.utf8.count - tail.utf8.count)) + tail).utf8)
    }

    /// An `ipc://` endpoint in a fresh temporary folder (the bound applies to stream
    /// transports; `inproc://` passes messages without decoding them).
    static func ipcEndpoint(_ name: String) throws -> (String, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chime-oversize-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return ("ipc://\(folder.path)/\(name)", folder)
    }

    @Test func aControlReplyOverTheBoundIsRefusedAsUnavailable() throws {
        let context = try Context()
        defer { context.shutdown() }
        let (endpoint, folder) = try Self.ipcEndpoint("control")
        defer { try? FileManager.default.removeItem(at: folder) }
        let shard = try FakeShard(id: 0, context: context, tag: "oversize", endpoint: endpoint) { _, request in
            guard case .recipient(let id) = request.command else { return nil }
            return Self.reply(request, bytes: id == "big" ? 100 * 1024 : 32 * 1024)
        }
        defer { shard.stop() }
        let client = try ControlClient(
            endpoint: endpoint, timeout: .milliseconds(500), retries: 1, context: context, maxReplyBytes: 64 * 1024)
        let small = try client.sendReturningBytes(ControlRequest(command: .recipient("small")), expecting: EmptyResult.self)
        #expect(small.bytes.count == 32 * 1024)
        #expect(throws: WireError(.unavailable, "")) {
            try client.send(ControlRequest(command: .recipient("big")), expecting: EmptyResult.self)
        }
        #expect(shard.requests.filter { $0.command == .recipient("big") }.count == 2, "sent, then once more on a fresh socket")
        // The client goes on working after the refusal (a fresh socket per retry).
        let again = try client.sendReturningBytes(ControlRequest(command: .recipient("small")), expecting: EmptyResult.self)
        #expect(again.bytes.count == 32 * 1024)
    }

    @Test func aPipelinedReplyOverTheBoundSettlesUnavailable() async throws {
        let context = try Context()
        defer { context.shutdown() }
        let (endpoint, folder) = try Self.ipcEndpoint("pipelined")
        defer { try? FileManager.default.removeItem(at: folder) }
        let shard = try FakeShard(id: 0, context: context, tag: "oversize-pipelined", endpoint: endpoint) { _, request in
            guard case .recipient(let id) = request.command else { return nil }
            return Self.reply(request, bytes: id == "big" ? 100 * 1024 : 32 * 1024)
        }
        defer { shard.stop() }
        let client = try PipelinedClient(
            endpoint: endpoint, window: 4, timeout: .milliseconds(500), retries: 1, context: context, maxReplyBytes: 64 * 1024)
        defer { client.close() }
        let small = ControlRequest(requestId: "small-1", command: .recipient("small"))
        #expect(try await client.exchange(WireCodec().encode(small), requestId: "small-1").count == 32 * 1024)
        let big = ControlRequest(requestId: "big-1", command: .recipient("big"))
        await #expect(throws: WireError(.unavailable, "")) {
            try await client.exchange(WireCodec().encode(big), requestId: "big-1")
        }
        let again = ControlRequest(requestId: "small-2", command: .recipient("small"))
        #expect(try await client.exchange(WireCodec().encode(again), requestId: "small-2").count == 32 * 1024)
    }

    @Test func anEventOverTheBoundIsNotDelivered() throws {
        let context = try Context()
        defer { context.shutdown() }
        let (endpoint, folder) = try Self.ipcEndpoint("events")
        defer { try? FileManager.default.removeItem(at: folder) }
        let publisher = try Socket(.publisher, context: context)
        defer { publisher.close() }
        try publisher.set(.linger(milliseconds: 0))
        try publisher.bind(to: endpoint)
        let subscriber = try SubscriberSocket.make(
            endpoint: endpoint, topics: ["fire."], highWaterMark: 100, curve: nil, context: context, maxMessageBytes: 8 * 1024 + 1024)
        defer { subscriber.close() }
        var first: [Data]?
        for _ in 0..<500 where first == nil {
            _ = try publisher.send([Data("fire.alice".utf8), Data("probe".utf8)], dontWait: true)
            first = try subscriberReceive(subscriber, timeout: 10)
        }
        #expect(first?.last == Data("probe".utf8))
        while try subscriberReceive(subscriber, timeout: 50) != nil {}
        _ = try publisher.send([Data("fire.alice".utf8), Data(repeating: 0x78, count: 64 * 1024)], dontWait: true)
        #expect(try subscriberReceive(subscriber, timeout: 300) == nil, "an oversized event is dropped with its connection")
    }
}

/// One message, or `nil` when none came within `milliseconds`.
private func subscriberReceive(_ socket: Socket, timeout milliseconds: Int32) throws -> [Data]? {
    try socket.set(.receiveTimeout(milliseconds: milliseconds))
    return try socket.receiveMessage()
}
