import ChimeCoordinator
import Foundation
import ZeroMQ

/// The subscription path of the event forwarder: one forwarder for the whole run, on `ipc://`
/// endpoints (libzmq applies ZMQ_MAXMSGSIZE to connections, not to `inproc://`), with Chime's
/// default bounds. Each input is split into frames (``FrameSplitter``) that an XSUB
/// connection sends to the forwarder's XPUB as subscription messages (a frame starting with
/// byte 1 subscribes, 0 unsubscribes); the connection is replaced every 256 inputs (closing
/// one per input outran libzmq's asynchronous close: `Too many open files`), so subscriptions
/// pile up and are freed by the disconnect as a subscriber's would be. A crash of the
/// forwarder (libzmq's trie, the proxy) is a crash of this process: a finding.
final class SubscriptionHarness: @unchecked Sendable {
    // @unchecked: libFuzzer calls the target from one thread; the sockets never leave it.
    static let shared = SubscriptionHarness()

    private let context: Context
    private let forwarder: EventForwarder
    private let publishEndpoint: String
    private var subscriber: Socket?
    private var inputs = 0

    private init() {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-fuzz-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            context = try Context()
            publishEndpoint = "ipc://\(directory.path)/events"
            forwarder = try EventForwarder(
                context: context, ingest: "ipc://\(directory.path)/ingest", publish: publishEndpoint, lingerMilliseconds: 0)
        } catch {
            fatalError("the forwarder did not start: \(error)")
        }
    }

    func fuzz(_ bytes: [UInt8]) {
        do {
            inputs += 1
            if inputs % 256 == 0 {
                subscriber?.close()
                subscriber = nil
            }
            let socket: Socket
            if let subscriber {
                socket = subscriber
            } else {
                socket = try Socket(.xsubscriber, context: context)
                try socket.set(.linger(milliseconds: 0))
                try socket.connect(to: publishEndpoint)
                subscriber = socket
            }
            // The subscriber's own libzmq keeps what it sends in a trie too: inputs are at most
            // 4 KiB (scripts/fuzz.sh -max_len), far below the depth its teardown cannot take.
            for frame in FrameSplitter.frames(from: bytes) where !frame.isEmpty {
                _ = try socket.send([frame], dontWait: true)
            }
        } catch {
            fatalError("a subscriber socket failed: \(error)")
        }
    }
}
