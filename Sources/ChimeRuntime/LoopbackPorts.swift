import Foundation

/// Free TCP ports on 127.0.0.1, for running a cluster beside others (tests, benchmarks).
public enum LoopbackPorts {
    /// A base port whose `count` consecutive ports are free to bind on 127.0.0.1, chosen at
    /// random in 20000-59999; `nil` after 200 tries. Another process may still take a port
    /// between this check and its use.
    public static func freeBase(count: Int) -> Int? {
        for _ in 0..<200 {
            let base = Int.random(in: 2000..<5999) * 10
            if (base..<base + count).allSatisfy(isFree) { return base }
        }
        return nil
    }

    /// Whether `port` can be bound on 127.0.0.1 right now. The corresponding call is `bind(2)`.
    public static func isFree(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
