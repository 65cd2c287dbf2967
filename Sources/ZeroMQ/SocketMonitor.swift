internal import CZeroMQ
import Foundation

/// What a socket monitor reports: one event of a socket's connections, as libzmq sends it on
/// the monitor's PAIR socket (two frames: 2 bytes event number and 4 bytes value in host order,
/// then the endpoint).
public struct SocketMonitorEvent: Sendable, Hashable {
    /// The events a monitor can be asked for (a bit set, `ZMQ_EVENT_*`).
    public struct Kinds: OptionSet, Sendable, Hashable {
        /// The `ZMQ_EVENT_*` bits.
        public let rawValue: Int32
        /// The set with these `ZMQ_EVENT_*` bits.
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// A connection was accepted on a bound endpoint (the value is its file descriptor).
        public static let accepted = Kinds(rawValue: ZMQ_EVENT_ACCEPTED)
        /// A connection was closed (the value is the file descriptor it had).
        public static let disconnected = Kinds(rawValue: ZMQ_EVENT_DISCONNECTED)
        /// Monitoring ended (the socket closed, or monitoring was turned off).
        public static let monitorStopped = Kinds(rawValue: ZMQ_EVENT_MONITOR_STOPPED)
    }

    /// The event (one bit of ``Kinds``).
    public var kind: Kinds
    /// The event's value: a file descriptor, an errno or an interval, by event.
    public var value: UInt32
    /// The endpoint the event concerns, as the monitored socket knows it.
    public var endpoint: String

    /// Creates the value from its fields (see each property for meaning).
    public init(kind: Kinds, value: UInt32, endpoint: String) {
        self.kind = kind
        self.value = value
        self.endpoint = endpoint
    }

    /// Reads one monitor message; `nil` for anything that is not two frames with a 6-byte first
    /// frame (total: the bytes come from libzmq, but nothing here traps on others).
    public init?(frames: [Data]) {
        guard frames.count == 2, frames[0].count == 6 else { return nil }
        let bytes = [UInt8](frames[0])
        let event = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
        let value = UInt32(bytes[2]) | UInt32(bytes[3]) << 8 | UInt32(bytes[4]) << 16 | UInt32(bytes[5]) << 24
        // libzmq writes them in host order; every platform Chime runs on is little-endian.
        self.init(kind: Kinds(rawValue: Int32(event)), value: value, endpoint: String(decoding: frames[1], as: UTF8.self))
    }
}

extension Socket {
    /// Reports `events` of this socket's connections on a PAIR socket libzmq binds at
    /// `endpoint` (`inproc://` only); connect a `.pair` socket there and read
    /// ``SocketMonitorEvent``s. Call on the socket's own thread.
    ///
    /// - Throws: ``ZeroMQError`` (`invalidArgument` for an endpoint that is not `inproc://`,
    ///   `contextTerminated`).
    ///
    /// The corresponding libzmq call is `zmq_socket_monitor`.
    public func monitor(at endpoint: String, events: SocketMonitorEvent.Kinds) throws {
        try Calls.socketMonitor(handle, endpoint: endpoint, events: events.rawValue)
    }
}
