#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One subscriber connection of the forwarder's XPUB, cut off on its own: libzmq 4.3 cannot
/// close a single pipe of a bound socket, so the forwarder calls `shutdown(2)` on the
/// connection's descriptor (libzmq's `__fd` metadata). libzmq's I/O thread then reads end of
/// stream, ends the session and drops the pipe, and the XPUB frees that connection's
/// subscriptions (its `disconnected` monitor event follows); every other subscriber keeps its
/// connection and its events. `shutdown` only ends the stream: the descriptor stays libzmq's
/// and is closed by it, so nothing here can close a descriptor another part of the process
/// reuses.
///
/// A descriptor number outlives its connection, so the forwarder records the socket's
/// identity (its device and inode, unique among open sockets) when it first sees the
/// connection and cuts only a descriptor that still has it.
enum SubscriberSocket {
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
}
