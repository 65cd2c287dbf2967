import ChimeCore
import ChimeRuntime
import ChimeWire
import ChimeClient
import Foundation
import ZeroMQ
import ChimeSecurity

/// A bare SUB socket on the events endpoint for ``BenchSubscriber/Mode/raw``: no receive
/// high-water mark, the arrival time taken right after the receive, fields read from the
/// event's bytes without a JSON decode.
enum RawSubscription {
    /// Receives `[topic, JSON]` fire events until `stop`, calling `onEvent(actual, body)`.
    /// The one SUB socket connects to every endpoint (every shard's events) and fair-queues them.
    /// - Throws: `ZeroMQError` for a bad endpoint.
    static func run(
        endpoints: [String], curve: CurveClientKeys?, stop: StopSignal, onReady: () -> Void, onEvent: (Double, Data) -> Void
    ) throws {
        guard let first = endpoints.first else { return }
        let socket = try SubscriberSocket.make(
            endpoint: first, topics: [Topic.firePrefix], highWaterMark: 0, curve: curve, stop: stop)
        defer { socket.close() }
        for endpoint in endpoints.dropFirst() { try socket.connect(to: endpoint) }
        onReady()
        let poller = Poller()
        poller.register(socket, for: .readable)
        do {
            while !stop.isStopRequested {
                guard try poller.poll(timeout: .milliseconds(100)) > 0 else { continue }
                while let frames = try socket.receiveMessage(dontWait: true) {
                    let actual = Date().timeIntervalSince1970
                    guard frames.count == 2 else { continue }
                    onEvent(actual, frames[1])
                }
            }
        } catch let error as ZeroMQError where error.code == .contextTerminated {
            return
        }
    }

    static let reminderKey = Array(#""reminderId":""#.utf8)
    static let dueKey = Array(#""dueAt":""#.utf8)

    /// The reminder id of an event as an integer; `nil` when it is not one (a probe).
    static func reminderNumber(in body: Data) -> Int? {
        guard let value = stringValue(after: reminderKey, in: body) else { return nil }
        return Int(value)
    }

    /// The event's `dueAt`, epoch seconds.
    static func dueAt(in body: Data) -> Double? {
        guard let value = stringValue(after: dueKey, in: body) else { return nil }
        return (try? RFC3339.parseInstant(value))?.timeIntervalSince1970
    }

    /// The string after `"key":"` up to the next quote (Chime's ids and instants hold no
    /// escaped quotes).
    static func stringValue(after key: [UInt8], in body: Data) -> String? {
        body.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> String? in
            guard bytes.count > key.count else { return nil }
            var index = 0
            while index + key.count < bytes.count {
                if bytes[index] == key[0] && key.indices.allSatisfy({ bytes[index + $0] == key[$0] }) {
                    let start = index + key.count
                    var end = start
                    while end < bytes.count && bytes[end] != UInt8(ascii: "\"") { end += 1 }
                    return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
                }
                index += 1
            }
            return nil
        }
    }
}
