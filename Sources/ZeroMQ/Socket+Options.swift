internal import CZeroMQ
import Foundation

extension Socket {
    /// Applies `option`, such as `.linger(milliseconds: 1000)` or `.subscribe(prefix: "fire.")`.
    ///
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/invalidArgument`` when the
    ///   option does not apply to this socket kind or its value is out of range (a
    ///   CURVE key that is not 40 Z85 characters), or ``ZeroMQError/Code/contextTerminated``.
    ///
    /// The corresponding libzmq call is `zmq_setsockopt`.
    public func set(_ option: SocketOption) throws {
        let socket = handle
        let (number, name, value) = option.setting
        switch value {
        case .int(var integer):
            try withUnsafeBytes(of: &integer) { try Calls.setOption(socket, number, named: name, bytes: $0) }
        case .int64(var integer):
            try withUnsafeBytes(of: &integer) { try Calls.setOption(socket, number, named: name, bytes: $0) }
        case .bytes(let data):
            try data.withUnsafeBytes { try Calls.setOption(socket, number, named: name, bytes: $0) }
        case .string(let string):
            // libzmq tells a 40-character Z85 key from a 32-byte binary one by the length
            // including the terminating NUL.
            try string.utf8CString.withUnsafeBytes {
                try Calls.setOption(socket, number, named: name, bytes: $0)
            }
        }
    }

    /// Whether the message being received has further frames, after a frame was received.
    ///
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/contextTerminated``.
    ///
    /// The corresponding libzmq call is `zmq_getsockopt(ZMQ_RCVMORE)`.
    public var hasMore: Bool {
        get throws {
            try Calls.intOption(handle, ZMQ_RCVMORE, named: "ZMQ_RCVMORE") != 0
        }
    }

    /// Whether a message can be received (`.readable`) or sent (`.writable`) without
    /// blocking right now.
    ///
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/contextTerminated``.
    ///
    /// The corresponding libzmq call is `zmq_getsockopt(ZMQ_EVENTS)`.
    public var events: PollEvents {
        get throws {
            let events = try Calls.intOption(handle, ZMQ_EVENTS, named: "ZMQ_EVENTS")
            return PollEvents(rawValue: Int16(truncatingIfNeeded: events)).intersection([.readable, .writable])
        }
    }

    /// The endpoint most recently bound or connected, with wildcards resolved: binding
    /// `tcp://127.0.0.1:*` reports `tcp://127.0.0.1:41213`; empty before any bind or connect.
    ///
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/contextTerminated``.
    ///
    /// The corresponding libzmq call is `zmq_getsockopt(ZMQ_LAST_ENDPOINT)`.
    public var lastEndpoint: String {
        get throws {
            // Longer than any tcp:// or ipc:// endpoint libzmq can resolve (sun_path is 108 bytes).
            var buffer = [UInt8](repeating: 0, count: 1024)
            let socket = handle
            let size = try buffer.withUnsafeMutableBytes {
                try Calls.option(socket, ZMQ_LAST_ENDPOINT, named: "ZMQ_LAST_ENDPOINT", into: $0)
            }
            return String(decoding: buffer.prefix(size).prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// The routing ID this socket presents to `router` peers; empty when libzmq chose none.
    ///
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/contextTerminated``.
    ///
    /// The corresponding libzmq call is `zmq_getsockopt(ZMQ_ROUTING_ID)`.
    public var routingID: Data {
        get throws {
            // Routing IDs are at most 255 bytes.
            var buffer = [UInt8](repeating: 0, count: 255)
            let socket = handle
            let size = try buffer.withUnsafeMutableBytes {
                try Calls.option(socket, ZMQ_ROUTING_ID, named: "ZMQ_ROUTING_ID", into: $0)
            }
            return Data(buffer.prefix(size))
        }
    }
}
