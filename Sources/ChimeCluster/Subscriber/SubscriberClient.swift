import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import ZeroMQ

/// Receives fire events from the coordinator's XPUB endpoint.
///
/// Topics match by prefix in ZeroMQ (`fire.al` would also match `fire.alice`), so
/// `recipient` is also compared exactly on every event.
public final class SubscriberClient {
    let endpoint: String
    let recipient: RecipientID?
    let stop: StopSignal
    let codec = WireCodec()

    /// - Parameters:
    ///   - endpoint: the events endpoint to connect to (`tcp://127.0.0.1:7703`).
    ///   - recipient: one recipient's events only; every fire event when `nil`.
    public init(endpoint: String, recipient: RecipientID?, stop: StopSignal) {
        self.endpoint = endpoint
        self.recipient = recipient
        self.stop = stop
    }

    /// Calls `onEvent` for every fire event until the stop signal, with the raw JSON too.
    /// - Parameter onReady: called once the subscription is sent.
    /// - Throws: `ZeroMQError` when the endpoint is invalid.
    public func run(onReady: () -> Void = {}, onEvent: (FireEvent, Data) -> Void) throws {
        let context = try Context()
        stop.onStop { context.shutdown() }
        let socket = try Socket(.subscriber, context: context)
        defer { socket.close() }
        try socket.set(.linger(milliseconds: 0))
        let topic = recipient.map { Topic.fire($0) } ?? Topic.firePrefix
        try socket.set(.subscribe(Data(topic.utf8)))
        try socket.connect(to: endpoint)
        onReady()
        let poller = Poller()
        poller.register(socket, for: .readable)
        do {
            while !stop.isStopRequested {
                guard try poller.poll(timeout: .milliseconds(100)) > 0 else { continue }
                while let frames = try socket.receiveMessage(dontWait: true) {
                    guard frames.count == 2 else { continue }
                    if let recipient, frames[0] != Data(Topic.fire(recipient).utf8) { continue }
                    guard let event = try? codec.decode(FireEvent.self, from: frames[1]) else { continue }
                    onEvent(event, frames[1])
                }
            }
        } catch let error as ZeroMQError where error.code == .contextTerminated {
            return
        }
    }
}
