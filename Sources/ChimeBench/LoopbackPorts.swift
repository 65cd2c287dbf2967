import Foundation

/// Free TCP ports on 127.0.0.1.
enum LoopbackPorts {
    /// A base port whose `count` consecutive ports are free, chosen at random in 20000-59999.
    /// - Throws: `BenchError` after 200 tries.
    static func freeBase(count: Int) throws -> Int {
        for _ in 0..<200 {
            let base = Int.random(in: 2000..<5999) * 10
            if (base..<base + count).allSatisfy(isFree) { return base }
        }
        throw BenchError("no \(count) free consecutive loopback ports found")
    }

    static func isFree(_ port: Int) -> Bool {
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
