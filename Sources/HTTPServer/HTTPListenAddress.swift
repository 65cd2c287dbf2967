import Foundation

/// Where an `HTTPServer` listens: an IP address literal and a TCP port, written
/// `127.0.0.1:7705`, `0.0.0.0:7705` or `[::1]:7705` (`localhost` means `127.0.0.1`).
public struct HTTPListenAddress: Hashable, Sendable, CustomStringConvertible {
    /// The IPv4 or IPv6 address literal, without brackets.
    public var host: String
    /// The TCP port; 0 lets the kernel choose one (`HTTPServer.port` tells which).
    public var port: UInt16

    /// Whether `host` is an IPv6 literal.
    public var isIPv6: Bool { host.contains(":") }

    /// Whether only this machine can connect (127.0.0.0/8 or `::1`).
    public var isLoopback: Bool { host.hasPrefix("127.") || host == "::1" }

    /// Creates the value from its fields; `host` must be an address literal (see `parse`).
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` (total: any text gives a value or an error).
    /// - Throws: `HTTPServerError` `.invalidAddress` naming what is wrong.
    public static func parse(_ text: String) throws(HTTPServerError) -> HTTPListenAddress {
        func invalid(_ reason: String) -> HTTPServerError {
            HTTPServerError(.invalidAddress, "'\(text)' is not HOST:PORT (\(reason)); for example 127.0.0.1:7705 or [::1]:7705")
        }
        var host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw invalid("no ] after an IPv6 address") }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw invalid("no :PORT after ]") }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw invalid("no :PORT") }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") { throw invalid("an IPv6 address goes in brackets") }
        }
        if host == "localhost" { host = "127.0.0.1" }
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
            let port = UInt16(portText)
        else { throw invalid("the port must be a number from 0 to 65535") }
        let address = HTTPListenAddress(host: String(host), port: port)
        guard address.socketAddress() != nil else { throw invalid("the host must be an IP address literal") }
        return address
    }

    /// `host:port`, with brackets around an IPv6 host.
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The `sockaddr_in` or `sockaddr_in6` bytes for `bind`; `nil` when `host` is no literal
    /// of its family. The corresponding call is `inet_pton(3)`.
    func socketAddress() -> [UInt8]? {
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { return nil }
            return withUnsafeBytes(of: &address) { Array($0) }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }
}

/// Why an HTTP server could not start. Equality compares the code only.
public struct HTTPServerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A stable kind of failure.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The listen address does not parse.
        public static let invalidAddress = Code(rawValue: "invalid_address")
        /// libmicrohttpd did not start (the address is in use or not on this machine).
        public static let cannotListen = Code(rawValue: "cannot_listen")
        /// HTTPS was asked for and this libmicrohttpd has no TLS.
        public static let tlsUnavailable = Code(rawValue: "tls_unavailable")
    }

    /// The kind of failure.
    public var code: Code
    /// A sentence for people.
    public var message: String

    /// Creates the value from its fields (see each property for meaning).
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public static func == (lhs: HTTPServerError, rhs: HTTPServerError) -> Bool { lhs.code == rhs.code }
    public var description: String { "\(code.rawValue): \(message)" }
}
