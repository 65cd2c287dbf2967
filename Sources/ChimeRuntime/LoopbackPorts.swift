import Foundation

/// Free TCP ports on 127.0.0.1, for running a cluster beside others (tests, benchmarks).
public enum LoopbackPorts {
    /// A base port whose `count` consecutive ports are free to bind on 127.0.0.1, chosen at
    /// random from 10000 up to the kernel's ephemeral range (20000-59999 when that range is
    /// unusually low); `nil` after 200 tries. Another process may still take a port
    /// between this check and its use.
    public static func freeBase(count: Int) -> Int? {
        // Below the kernel's ephemeral range (`ip_local_port_range`, 32768 by default): a
        // client reconnecting to a port nobody listens on can get that very port as its own
        // ephemeral one, connect to itself and hold it, and a restarted coordinator's bind
        // then fails with "Address already in use".
        let ceiling = min(60_000, ephemeralRangeStart() ?? 32_768) - max(0, count)
        let bases = ceiling > 12_000 ? (1_000..<(ceiling / 10)) : (2_000..<5_999)
        for _ in 0..<200 {
            let base = Int.random(in: bases) * 10
            if (base..<base + count).allSatisfy(isFree) { return base }
        }
        return nil
    }

    /// The first port of `/proc/sys/net/ipv4/ip_local_port_range` (`"32768\t60999"`); `nil`
    /// when the file cannot be read or does not hold two numbers.
    static func ephemeralRangeStart() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8) else { return nil }
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
        guard fields.count == 2, let low = Int(fields[0]), Int(fields[1]) != nil else { return nil }
        return low
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
