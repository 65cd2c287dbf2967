import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A one-request HTTP/1.1 client for tests: `GET` on 127.0.0.1, the connection closed after
/// the reply (the coordinator's `/healthz`, `/readyz`, `/metrics`).
public enum LoopbackHTTP {
    /// Sends `GET path` to `127.0.0.1:port` and reads the reply until the server closes.
    /// - Returns: the status code and the body; `nil` when nothing accepts the connection or
    ///   no status line arrives within `timeout` seconds.
    public static func get(port: Int, path: String, timeout: Double = 2) -> (status: Int, body: String)? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        let sent = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == request.count else { return nil }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while received.count < 4 << 20 {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[0..<count]
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        let text = String(decoding: received, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let statusLine = parts.first?.split(separator: "\r\n").first ?? ""
        let fields = statusLine.split(separator: " ")
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/"), let status = Int(fields[1]) else { return nil }
        return (status, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}
