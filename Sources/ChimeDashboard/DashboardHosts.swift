import Foundation
import HTTPServer

/// The names a dashboard answers to, checked on every request's `Host` header against DNS
/// rebinding: a page from `evil.example` whose name later resolves to 127.0.0.1 makes the
/// browser send `Host: evil.example:7790`, which a loopback dashboard without a login would
/// otherwise serve (reminder bodies, the CSRF token, changes).
///
/// A loopback listener answers `127.0.0.1` (any `127.x` address it listens on), `localhost`
/// and `[::1]`, plus the names given with `--allow-host`; the port is not compared. Another
/// address (which needs TLS and a login) answers any name unless `--allow-host` names some:
/// then only those and the listening address.
public struct DashboardHosts: Sendable, Equatable {
    /// Host names accepted, lower case, without port or brackets; `nil` accepts any.
    public let names: Set<String>?

    /// Accepts any `Host`.
    public static let any = DashboardHosts(names: nil)

    /// Accepts exactly `names` (lower-cased; a port or IPv6 brackets are dropped).
    public init(names: Set<String>?) {
        self.names = names.map { Set($0.compactMap(Self.hostName)) }
    }

    /// The names a listener on `address` answers to, as the type's documentation says.
    public static func serving(_ address: HTTPListenAddress, allowing extra: [String]) -> DashboardHosts {
        if address.isLoopback {
            return DashboardHosts(names: Set(["localhost", "127.0.0.1", "::1", address.host] + extra))
        }
        return extra.isEmpty ? .any : DashboardHosts(names: Set([address.host] + extra))
    }

    /// Whether a request with this `Host` header value is served (a missing one is not,
    /// unless any name is accepted).
    public func accepts(_ host: String?) -> Bool {
        guard let names else { return true }
        guard let host, let name = Self.hostName(host) else { return false }
        return names.contains(name)
    }

    /// The host name of a `Host` header or an origin's authority: lower case, without the
    /// port and the IPv6 brackets; `nil` when empty or malformed.
    static func hostName(_ authority: String) -> String? {
        var text = Substring(authority.lowercased())
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber)) else { return nil }
            text = text[text.index(after: text.startIndex)..<close]
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            // host:port; several colons are a bare IPv6 address, taken whole.
            let port = text[text.index(after: colon)...]
            guard !port.isEmpty, port.allSatisfy(\.isNumber) else { return nil }
            text = text[..<colon]
        }
        guard !text.isEmpty, !text.contains(where: { $0 == "/" || $0 == "@" || $0 == " " }) else { return nil }
        return String(text)
    }

    /// The host name of an `Origin` header (`https://name:port`); `nil` for `null` or garbage.
    static func originHostName(_ origin: String) -> String? {
        for scheme in ["http://", "https://"] where origin.lowercased().hasPrefix(scheme) {
            return hostName(String(origin.dropFirst(scheme.count)))
        }
        return nil
    }
}
