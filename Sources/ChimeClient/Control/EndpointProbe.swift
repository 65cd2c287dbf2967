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
        probe([endpoint], timeout: timeout)[0]
    }

    /// Probes every endpoint at once: each connection is started, then one `poll(2)` waits
    /// at most `timeout` for all the handshakes still under way, so n endpoints that drop
    /// packets cost `timeout` once, not n times (a scatter over many shards probes them so).
    /// - Returns: one outcome per endpoint, in order.
    static func probe(_ endpoints: [String], timeout: Duration = .milliseconds(300)) -> [Outcome] {
        var outcomes = [Outcome](repeating: .unknown, count: endpoints.count)
        var pending: [(index: Int, descriptor: Int32)] = []
        for (index, endpoint) in endpoints.enumerated() {
            switch start(endpoint) {
            case .verdict(let outcome): outcomes[index] = outcome
            case .connecting(let descriptor): pending.append((index, descriptor))
            }
        }
        defer { for (_, descriptor) in pending { close(descriptor) } }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var waiting = pending
        while !waiting.isEmpty {
            let left = deadline - clock.now
            guard left > .zero else { break }
            var descriptors = waiting.map { pollfd(fd: $0.descriptor, events: Int16(POLLOUT), revents: 0) }
            let milliseconds = Int32(clamping: max(1, Int((left / .milliseconds(1)).rounded(.up))))
            let ready = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { break }
            var still: [(index: Int, descriptor: Int32)] = []
            for (slot, probe) in waiting.enumerated() {
                guard descriptors[slot].revents != 0 else {
                    still.append(probe)
                    continue
                }
                outcomes[probe.index] = finish(probe.descriptor)
            }
            waiting = still
        }
        return outcomes
    }

    /// A probe begun: a verdict at once, or a TCP connection under way on a descriptor the
    /// caller closes.
    enum Started {
        case verdict(Outcome)
        case connecting(Int32)
    }

    static func start(_ endpoint: String) -> Started {
        if endpoint.hasPrefix("ipc://") { return .verdict(probeUnix(path: String(endpoint.dropFirst(6)))) }
        guard endpoint.hasPrefix("tcp://") else { return .verdict(.unknown) }
        let address = endpoint.dropFirst(6)
        guard let colon = address.lastIndex(of: ":") else { return .verdict(.unknown) }
        var host = String(address[..<colon])
        let port = String(address[address.index(after: colon)...])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        // A `;` names a source address (`tcp://src;dst:port`); leave those to ZeroMQ.
        guard !host.isEmpty, !host.contains(";"), !host.contains("*"), UInt16(port) != nil else { return .verdict(.unknown) }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, port, &hints, &list) == 0, let first = list else { return .verdict(.unknown) }
        defer { freeaddrinfo(list) }
        return startConnect(family: first.pointee.ai_family, address: first.pointee.ai_addr, length: first.pointee.ai_addrlen)
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
        let started = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                startConnect(family: AF_UNIX, address: raw, length: socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        switch started {
        case .verdict(let outcome): return outcome
        case .connecting(let descriptor):
            defer { close(descriptor) }
            var pollDescriptor = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            var ready: Int32
            repeat { ready = poll(&pollDescriptor, 1, 300) } while ready < 0 && errno == EINTR
            return ready > 0 ? finish(descriptor) : .unknown
        }
    }

    /// A non-blocking `connect(2)`: its verdict when it has one at once (the descriptor is
    /// then closed), else the descriptor of the connection under way.
    static func startConnect(family: Int32, address: UnsafePointer<sockaddr>, length: socklen_t) -> Started {
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .verdict(.unknown) }
        if connect(descriptor, address, length) == 0 {
            close(descriptor)
            return .verdict(.listening)
        }
        let failure = errno
        guard failure == EINPROGRESS else {
            close(descriptor)
            return .verdict(failure == ECONNREFUSED || failure == ENOENT ? .refused : .unknown)
        }
        return .connecting(descriptor)
    }

    /// The verdict of a connection `poll(2)` found finished (`SO_ERROR`); does not close it.
    static func finish(_ descriptor: Int32) -> Outcome {
        var socketError: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &socketError, &size) == 0 else { return .unknown }
        if socketError == 0 { return .listening }
        return socketError == ECONNREFUSED ? .refused : .unknown
    }
}
