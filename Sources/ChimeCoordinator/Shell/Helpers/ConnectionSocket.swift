import CSocketStatistics

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection of a bound ZeroMQ socket, seen through its descriptor (libzmq's `__fd`
/// metadata): measured, and cut off on its own. libzmq 4.3 cannot close a single pipe of a
/// bound socket, so the forwarder (a subscriber past a bound) and the control loop (a
/// connection holding the most unread replies past the total) call `shutdown(2)` on the
/// connection's descriptor. libzmq's I/O thread then reads end of stream, ends the session
/// and drops the pipe with what it queued (an XPUB frees that connection's subscriptions, and
/// its `disconnected` monitor event follows); every other peer keeps its connection.
/// `shutdown` only ends the stream: the descriptor stays libzmq's and is closed by it, so
/// nothing here can close a descriptor another part of the process reuses.
///
/// A descriptor number outlives its connection, so each user records the socket's
/// identity (its device and inode, unique among open sockets) when it first sees the
/// connection and cuts only a descriptor that still has it.
enum ConnectionSocket {
    /// A socket's device and inode numbers (`fstat(2)`), which no other open file shares.
    struct Identity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// The identity of the socket at `descriptor`; `nil` when it is not an open socket.
    static func identity(of descriptor: Int32) -> Identity? {
        guard descriptor >= 0 else { return nil }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return nil }
        return Identity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// Ends the connection at `descriptor` (`shutdown(SHUT_RDWR)`) if it is still the socket
    /// with `identity`.
    /// - Returns: whether it was shut down (`false`: the descriptor was closed or now belongs
    ///   to another file, or `shutdown` failed, e.g. the peer had already gone).
    static func cut(_ descriptor: Int32, ifStill identity: Identity) -> Bool {
        guard self.identity(of: descriptor) == identity else { return false }
        return shutdown(descriptor, Int32(SHUT_RDWR)) == 0
    }

    /// The bytes the kernel holds for the TCP connection at `descriptor` and has not sent
    /// (Linux's `tcp_info.tcpi_notsent_bytes`): more than 0 when the peer stopped reading and
    /// its receive window closed. `nil` when it is not an open TCP socket.
    static func bytesNotSent(_ descriptor: Int32) -> UInt32? {
        guard descriptor >= 0 else { return nil }
        var notSent: UInt32 = 0
        return chime_tcp_bytes_not_sent(descriptor, &notSent) == 0 ? notSent : nil
    }
}
