internal import CZeroMQ
import Foundation

extension Socket {
    /// Sends `frames` as one multipart message, delivered all together or not at all.
    ///
    /// With `dontWait` the call returns `false` instead of blocking when the message
    /// cannot be queued now: the high-water mark is reached, or no peer is connected
    /// (with ``SocketOption/immediate(_:)``, no *completed* connection). A blocking send
    /// also returns `false` when ``SocketOption/sendTimeout(milliseconds:)`` elapses.
    ///
    /// - Parameter frames: At least one frame.
    /// - Returns: `true` when libzmq queued the message.
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/contextTerminated``,
    ///   ``ZeroMQError/Code/hostUnreachable`` (`router` with `routerMandatory`), or
    ///   ``ZeroMQError/Code/invalidState`` (`request`/`reply` out of turn).
    ///
    /// The corresponding libzmq call is `zmq_send`.
    @discardableResult
    public func send(_ frames: [Data], dontWait: Bool = false) throws -> Bool {
        precondition(!frames.isEmpty, "a ZeroMQ message has at least one frame")
        let lastIndex = frames.count - 1
        for (index, frame) in frames.enumerated() {
            // Only the first frame can meet the high-water mark: libzmq counts whole
            // messages, so once it takes the first frame it takes the rest.
            let isQueued = try send(frame, more: index < lastIndex, dontWait: dontWait && index == 0)
            if !isQueued {
                precondition(index == 0, "libzmq refused frame \(index) of a message it had started")
                return false
            }
        }
        return true
    }

    /// Sends one frame, announcing with `more` that further frames of the same message follow.
    ///
    /// Prefer ``send(_:dontWait:)`` for whole messages; a message left
    /// unfinished blocks every later send on this socket.
    ///
    /// - Returns: `true` when libzmq queued the frame; `false` when `dontWait` is set and
    ///   it cannot be queued now, or when the send timeout elapsed.
    /// - Throws: ``ZeroMQError`` as ``send(_:dontWait:)`` does.
    ///
    /// The corresponding libzmq call is `zmq_send`.
    @discardableResult
    public func send(_ frame: Data, more: Bool = false, dontWait: Bool = false) throws -> Bool {
        let flags = (more ? ZMQ_SNDMORE : 0) | (dontWait ? ZMQ_DONTWAIT : 0)
        let socket = handle
        // zmq_send copies the bytes once into a libzmq message, which then owns them.
        return try frame.withUnsafeBytes { bytes in
            try Calls.send(socket, bytes: bytes, flags: flags)
        }
    }

    /// Receives every frame of the next message.
    ///
    /// - Returns: The frames, or `nil` when `dontWait` is set and nothing is queued, or
    ///   when ``SocketOption/receiveTimeout(milliseconds:)`` elapsed.
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/contextTerminated`` after
    ///   ``Context/shutdown()``, or ``ZeroMQError/Code/invalidState`` (`request`/`reply`
    ///   out of turn).
    ///
    /// The corresponding libzmq call is `zmq_msg_recv`.
    public func receiveMessage(dontWait: Bool = false) throws -> [Data]? {
        try receiveFrames(dontWait: dontWait, properties: [])?.frames
    }

    /// Receives every frame of the next message and one metadata property of its connection,
    /// such as ``MessageProperty/userID``: the user id the ZAP handler gave the peer, which a
    /// peer cannot forge (it is set by the handshake, not carried in the message).
    ///
    /// - Returns: The frames and the property (`nil` when the connection has none), or `nil`
    ///   when `dontWait` is set and nothing is queued, or the receive timeout elapsed.
    /// - Throws: ``ZeroMQError`` as ``receiveMessage(dontWait:)`` does.
    ///
    /// The corresponding libzmq calls are `zmq_msg_recv` and `zmq_msg_gets`.
    public func receiveMessage(dontWait: Bool = false, property name: String) throws
        -> (frames: [Data], property: String?)?
    {
        try receiveFrames(dontWait: dontWait, properties: [name]).map { ($0.frames, $0.properties[0]) }
    }

    /// Receives every frame of the next message and several metadata properties of its
    /// connection (``MessageProperty/userID``, ``MessageProperty/peerAddress``), in the order
    /// of `names`.
    ///
    /// - Returns: The frames and one value per name (`nil` when the connection has none), or
    ///   `nil` when `dontWait` is set and nothing is queued, or the receive timeout elapsed.
    /// - Throws: ``ZeroMQError`` as ``receiveMessage(dontWait:)`` does.
    ///
    /// The corresponding libzmq calls are `zmq_msg_recv` and `zmq_msg_gets`.
    public func receiveMessage(dontWait: Bool = false, properties names: [String]) throws
        -> (frames: [Data], properties: [String?])?
    {
        try receiveFrames(dontWait: dontWait, properties: names)
    }

    /// Every `receiveMessage` form: the frames, and the properties `names` asked for.
    private func receiveFrames(dontWait: Bool, properties names: [String]) throws
        -> (frames: [Data], properties: [String?])?
    {
        let socket = handle
        return try Calls.withMessage { message in
            guard try Calls.messageReceive(message, from: socket, flags: dontWait ? ZMQ_DONTWAIT : 0) else {
                return nil
            }
            var frames = [Data(of: message)]
            var properties = names.map { Calls.messageProperty(message, named: $0) }
            // libzmq delivers a message's frames together, so the rest are already queued.
            while Calls.messageHasMore(message) {
                let isReceived = try Calls.messageReceive(message, from: socket, flags: 0)
                precondition(isReceived, "libzmq reported more frames but delivered none")
                frames.append(Data(of: message))
                // A ROUTER's routing-id frame is made locally; the peer's frames carry the metadata.
                for (index, name) in names.enumerated() where properties[index] == nil {
                    properties[index] = Calls.messageProperty(message, named: name)
                }
            }
            return (frames, properties)
        }
    }

    /// Receives one frame and whether more frames of the same message follow.
    ///
    /// - Returns: The frame and its `more` flag, or `nil` when `dontWait` is set and
    ///   nothing is queued, or when the receive timeout elapsed.
    /// - Throws: ``ZeroMQError`` as ``receiveMessage(dontWait:)`` does.
    ///
    /// The corresponding libzmq call is `zmq_msg_recv`.
    public func receiveFrame(dontWait: Bool = false) throws -> (Data, more: Bool)? {
        let socket = handle
        return try Calls.withMessage { message in
            guard try Calls.messageReceive(message, from: socket, flags: dontWait ? ZMQ_DONTWAIT : 0) else {
                return nil
            }
            return (Data(of: message), more: Calls.messageHasMore(message))
        }
    }
}

/// Names of the metadata properties libzmq attaches to received messages.
public enum MessageProperty {
    /// The user id the ZAP handler returned for the connection (RFC 27 "User-Id").
    ///
    /// The corresponding libzmq call is `zmq_msg_gets(msg, "User-Id")`.
    public static let userID = "User-Id"
    /// The peer's address as the transport reports it (`127.0.0.1` for tcp).
    ///
    /// The corresponding libzmq call is `zmq_msg_gets(msg, "Peer-Address")`.
    public static let peerAddress = "Peer-Address"
    /// The file descriptor of the connection's socket, in decimal: what libzmq 4.3 keeps for
    /// the deprecated `ZMQ_SRCFD`, and the value of that connection's `disconnected` monitor
    /// event. Present on tcp and ipc connections (with ``peerAddress``), absent on inproc.
    ///
    /// The corresponding libzmq call is `zmq_msg_gets(msg, "__fd")` (`zmq_msg_get(msg, ZMQ_SRCFD)`).
    public static let fileDescriptor = "__fd"
}

extension Data {
    /// Copies a received libzmq message's bytes, the one copy a receive makes.
    init(of message: UnsafeMutablePointer<zmq_msg_t>) {
        self.init(Calls.messageBytes(message))
    }
}
