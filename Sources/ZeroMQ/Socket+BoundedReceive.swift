internal import CZeroMQ
import Foundation

/// A message read with a bound on its frame count (``Socket/receiveMessage(dontWait:properties:maxFrames:)``).
public struct BoundedMessage: Sendable {
    /// The first frames, at most the bound.
    public var frames: [Data]
    /// One value per property name asked for (`nil` when the connection has none).
    public var properties: [String?]
    /// Whether the message had more frames than the bound. The rest are left in the socket
    /// (``Socket/hasMore`` is true) for ``Socket/discardFrames(upTo:)`` to drop a slice at a time.
    public var isTruncated: Bool
}

extension Socket {
    /// Receives the first `maxFrames` frames of the next message and metadata properties of its
    /// connection. A message with more frames is cut there: the rest stay queued, to be
    /// dropped with ``discardFrames(upTo:)`` (libzmq delivers a message whole, so a
    /// million-frame message otherwise costs a million allocations in one go).
    ///
    /// - Returns: `nil` when `dontWait` is set and nothing is queued, or the receive timeout elapsed.
    /// - Throws: ``ZeroMQError`` as ``receiveMessage(dontWait:)`` does.
    ///
    /// The corresponding libzmq calls are `zmq_msg_recv` and `zmq_msg_gets`.
    public func receiveMessage(dontWait: Bool = false, properties names: [String] = [], maxFrames: Int) throws -> BoundedMessage? {
        let socket = handle
        return try Calls.withMessage { message -> BoundedMessage? in
            guard try Calls.messageReceive(message, from: socket, flags: dontWait ? ZMQ_DONTWAIT : 0) else {
                return nil
            }
            var frames = [Data(of: message)]
            var properties = names.map { Calls.messageProperty(message, named: $0) }
            while Calls.messageHasMore(message) {
                guard frames.count < max(1, maxFrames) else { return BoundedMessage(frames: frames, properties: properties, isTruncated: true) }
                let isReceived = try Calls.messageReceive(message, from: socket, flags: 0)
                precondition(isReceived, "libzmq reported more frames but delivered none")
                frames.append(Data(of: message))
                for (index, name) in names.enumerated() where properties[index] == nil {
                    properties[index] = Calls.messageProperty(message, named: name)
                }
            }
            return BoundedMessage(frames: frames, properties: properties, isTruncated: false)
        }
    }

    /// Drops up to `limit` frames of a message whose first frames were read (``hasMore``),
    /// without copying them.
    /// - Returns: whether the message is finished (nothing of it is left to drop).
    /// - Throws: ``ZeroMQError`` as ``receiveMessage(dontWait:)`` does.
    ///
    /// The corresponding libzmq call is `zmq_msg_recv`.
    public func discardFrames(upTo limit: Int) throws -> Bool {
        guard try hasMore else { return true }
        let socket = handle
        return try Calls.withMessage { message in
            for _ in 0..<max(1, limit) {
                // The rest of a message is queued with its first frame: this never waits.
                guard try Calls.messageReceive(message, from: socket, flags: ZMQ_DONTWAIT) else { return true }
                if !Calls.messageHasMore(message) { return true }
            }
            return false
        }
    }
}
