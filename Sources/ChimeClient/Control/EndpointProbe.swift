import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether anything listens at a ZeroMQ `tcp://` or `ipc://` endpoint, by a plain
/// non-blocking `connect(2)` that is closed at once (no ZMTP bytes are sent).
///
/// ZeroMQ hides a refused connection (it reconnects quietly), so without this a client
/// would wait out every timeout before reporting that no coordinator runs.
enum EndpointProbe {
    enum Outcome: Equatable {
        /// A connection was accepted.
        case listening
        /// The peer refused (`ECONNREFUSED`), or the `ipc://` path does not exist.
        case refused
        /// No verdict: `inproc://`, an unresolvable name, a timeout, another error.
        case unknown
    }

    /// Probes `endpoint`, waiting at most `timeout` for a TCP handshake.
    static func probe(_ endpoint: String, timeout: Duration = .milliseconds(300)) -> Outcome {
        if endpoint.hasPrefix("ipc://") { return probeUnix(path: String(endpoint.dropFirst(6))) }
        guard endpoint.hasPrefix("tcp://") else { return .unknown }
        let address = endpoint.dropFirst(6)
        guard let colon = address.lastIndex(of: ":") else { return .unknown }
        var host = String(address[..<colon])
        let port = String(address[address.index(after: colon)...])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        // A `;` names a source address (`tcp://src;dst:port`); leave those to ZeroMQ.
        guard !host.isEmpty, !host.contains(";"), !host.contains("*"), UInt16(port) != nil else { return .unknown }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, port, &hints, &list) == 0, let first = list else { return .unknown }
        defer { freeaddrinfo(list) }
        return connectOnce(family: first.pointee.ai_family, address: first.pointee.ai_addr, length: first.pointee.ai_addrlen, timeout: timeout)
    }

    static func probeUnix(path: String) -> Outcome {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity, !path.hasPrefix("@") else { return .unknown }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                connectOnce(family: AF_UNIX, address: raw, length: socklen_t(MemoryLayout<sockaddr_un>.size), timeout: .milliseconds(300))
            }
        }
    }

    static func connectOnce(family: Int32, address: UnsafePointer<sockaddr>, length: socklen_t, timeout: Duration) -> Outcome {
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .unknown }
        defer { close(descriptor) }
        if connect(descriptor, address, length) == 0 { return .listening }
        switch errno {
        case ECONNREFUSED, ENOENT: return .refused
        case EINPROGRESS: break
        default: return .unknown
        }
        var pollDescriptor = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        var ready: Int32
        repeat { ready = poll(&pollDescriptor, 1, milliseconds) } while ready < 0 && errno == EINTR
        guard ready > 0 else { return .unknown }
        var socketError: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &socketError, &size) == 0 else { return .unknown }
        if socketError == 0 { return .listening }
        return socketError == ECONNREFUSED ? .refused : .unknown
    }
}
