import ChimeClient
import ChimeRuntime
import Foundation
import HelperThreads
import Synchronization
import ZeroMQ

/// Subscribes to topic prefixes on a thread of its own and collects raw `[topic, JSON]`
/// messages, for events other than fire events (`badge.`, `action.`).
public final class TopicCollector: Sendable {
    private let stop = StopSignal()
    private let thread = HelperThread(name: "topic-collector")

    /// Connects to `endpoint` and subscribes to each prefix.
    public init(endpoint: String, prefixes: [String]) {
        let stop = stop
        let storage = MessageStorage()
        self.storage = storage
        thread.start {
            do {
                let socket = try SubscriberSocket.make(
                    endpoint: endpoint, topics: prefixes, highWaterMark: nil, curve: nil, stop: stop)
                defer { socket.close() }
                while !stop.isStopRequested {
                    guard let frames = try socket.receiveMessage(dontWait: false), frames.count == 2 else { continue }
                    storage.append(String(decoding: frames[0], as: UTF8.self), frames[1])
                }
            } catch {
                // Context shut down by close(): the normal way out.
            }
        }
    }

    private let storage: MessageStorage

    /// The JSON objects received on exactly `topic`, in arrival order.
    public func objects(on topic: String) -> [[String: Any]] {
        storage.all.filter { $0.topic == topic }.compactMap {
            try? JSONSerialization.jsonObject(with: $0.body) as? [String: Any]
        }
    }

    /// Stops the thread and waits (at most 2 s) for it to close its socket.
    public func close() {
        stop.requestStop()
        thread.join(timeout: .seconds(2))
    }

    deinit { close() }
}

final class MessageStorage: Sendable {
    private let messages = Mutex<[(topic: String, body: Data)]>([])
    func append(_ topic: String, _ body: Data) { messages.withLock { $0.append((topic, body)) } }
    var all: [(topic: String, body: Data)] { messages.withLock { $0 } }
}
