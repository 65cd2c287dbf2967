import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which webhook hosts are on addresses a recipient must not make a worker call (SSRF):
/// loopback (127/8, ::1), private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local
/// (169.254/16, fe80::/10), carrier-grade NAT (100.64/10) and unspecified (0/8, ::).
public enum PrivateAddresses {
    /// What the SSRF check decided for a URL.
    public enum Verdict: Equatable, Sendable {
        /// Refused, with the reason.
        case refused(String)
        /// Allowed; the request must connect only to these checked addresses, given as
        /// `CURLOPT_RESOLVE` entries (``HTTPClient/Request/pinnedAddresses``; empty for a host
        /// that is an address literal, or a name that did not resolve: the request then fails,
        /// retryably).
        case allowed(pinnedAddresses: [String])
    }

    /// Why `url` is refused, or `nil` when every address its host resolves to is public.
    public static func refusal(of url: String) -> String? {
        if case .refused(let reason) = check(url) { return reason }
        return nil
    }

    /// Resolves `url`'s host once (with `resolve`), refuses it when any address is loopback,
    /// private, link-local, CGNAT or unspecified, and otherwise pins the request to the
    /// addresses it checked, so libcurl does not look the name up again: a name whose
    /// answers change between the check and the connection (DNS rebinding) still reaches only
    /// a checked, public address.
    public static func check(_ url: String, resolve: (String) -> [String] = resolve) -> Verdict {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else {
            return .refused("\(url) has no host")
        }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.lowercased() == "localhost" || bare.lowercased().hasSuffix(".localhost") {
            return .refused("\(host) is a loopback name (allow private addresses to deliver there)")
        }
        if isAddress(bare) {
            return isPrivate(bare) ? .refused(Self.privateReason(host, bare)) : .allowed(pinnedAddresses: [])
        }
        let addresses = resolve(bare)
        if let address = addresses.first(where: isPrivate) { return .refused(Self.privateReason(host, address)) }
        guard !addresses.isEmpty else { return .allowed(pinnedAddresses: []) }
        let port = components.port ?? (components.scheme?.lowercased() == "https" ? 443 : 80)
        let listed = addresses.map { $0.contains(":") ? "[\($0)]" : $0 }.joined(separator: ",")
        return .allowed(pinnedAddresses: ["\(bare):\(port):\(listed)"])
    }

    private static func privateReason(_ host: String, _ address: String) -> String {
        "\(host) resolves to \(address), a loopback, private or link-local address (allow private addresses to deliver there)"
    }

    /// Whether `text` is an IPv4 or IPv6 address literal.
    static func isAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
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
    public static func resolve(_ host: String) -> [String] {
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
