import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which webhook hosts are on addresses a recipient must not make a worker call (SSRF):
/// loopback (127/8, ::1), private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local
/// (169.254/16, fe80::/10), carrier-grade NAT (100.64/10) and unspecified (0/8, ::).
public enum PrivateAddresses {
    /// Why `url` is refused, or `nil` when every address its host resolves to is public.
    /// A host that does not resolve is not refused here (the request then fails, retryably).
    ///
    /// The check resolves the name before libcurl does, so a name whose answers change between
    /// the two (DNS rebinding) is not caught; pinning the checked address is the follow-up.
    public static func refusal(of url: String) -> String? {
        guard let host = URLComponents(string: url)?.host else { return "\(url) has no host" }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.lowercased() == "localhost" || bare.lowercased().hasSuffix(".localhost") {
            return "\(host) is a loopback name (allow private addresses to deliver there)"
        }
        for address in resolve(bare) where isPrivate(address) {
            return "\(host) resolves to \(address), a loopback, private or link-local address (allow private addresses to deliver there)"
        }
        return nil
    }

    /// Whether `address` (dotted IPv4 or IPv6 text) is loopback, private, link-local, CGNAT or
    /// unspecified; `false` for text that is no address.
    public static func isPrivate(_ address: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            let bytes = withUnsafeBytes(of: v4.s_addr) { Array($0) }
            return isPrivateIPv4(bytes)
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes.allSatisfy({ $0 == 0 }) { return true }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
        if bytes[0] & 0xFE == 0xFC { return true }
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return true }
        // IPv4-mapped (::ffff:a.b.c.d).
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return isPrivateIPv4(Array(bytes[12..<16])) }
        return false
    }

    static func isPrivateIPv4(_ bytes: [UInt8]) -> Bool {
        switch (bytes[0], bytes[1]) {
        case (0, _), (10, _), (127, _): true
        case (169, 254), (192, 168): true
        case (172, 16...31): true
        case (100, 64...127): true
        default: false
        }
    }

    /// The addresses `host` resolves to, as text (empty when it does not resolve).
    static func resolve(_ host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [String] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let current = node {
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(current.pointee.ai_addr, current.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 {
                addresses.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            node = current.pointee.ai_next
        }
        return addresses
    }
}
