import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Whether a ZeroMQ bind address is free to bind again: what a coordinator checks before it
/// hands its store (and so its endpoints) to a successor (`ListenerHandover`).
public enum ListenAddress {
    /// Whether `endpoint` (`tcp://HOST:PORT` with a numeric host, `*`, or a name that
    /// resolves; `ipc://PATH`) can be bound now: a TCP socket with `SO_REUSEADDR` (as
    /// libzmq's listeners set it, so connections in `TIME_WAIT` do not count) binds to it and
    /// is closed at once; an `ipc://` path is free once its socket file is gone (libzmq
    /// unlinks it when the listener closes).
    /// - Returns: `nil` when it cannot be told (`inproc://`, an address that does not
    ///   resolve, a `tcp://` source address).
    public static func isFree(_ endpoint: String) -> Bool? {
        if endpoint.hasPrefix("ipc://") {
            let path = String(endpoint.dropFirst(6))
            guard !path.isEmpty, !path.hasPrefix("@") else { return nil }
            return !FileManager.default.fileExists(atPath: path)
        }
        guard endpoint.hasPrefix("tcp://") else { return nil }
        let address = endpoint.dropFirst(6)
        guard let colon = address.lastIndex(of: ":"), !address.contains(";") else { return nil }
        var host = String(address[..<colon])
        let port = String(address[address.index(after: colon)...])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard UInt16(port) != nil, !host.isEmpty else { return nil }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host == "*" ? nil : host, port, &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        let descriptor = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if bind(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 { return true }
        return errno == EADDRINUSE ? false : nil
    }
}
