import Foundation
import HTTPServer

/// Refuses a state-changing request that another site could have made the browser send
/// (OWASP CSRF prevention: synchronizer token, plus the Fetch Metadata and Origin checks).
/// The token is 32 random bytes made at start, known only to pages this dashboard served.
public struct CSRFGuard: Sendable {
    /// The token (64 hexadecimal digits) forms carry in field `csrf`.
    public let token: String

    /// A guard with a fresh random token (`SystemRandomNumberGenerator`: the kernel's
    /// `getrandom`), or with `token` in tests.
    public init(token: String? = nil) {
        if let token {
            self.token = token
        } else {
            var generator = SystemRandomNumberGenerator()
            self.token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        }
    }

    /// Why `request` (with its decoded form `fields`) is refused, or `nil` to let it through.
    public func refusal(of request: HTTPRequest, fields: [String: String]) -> String? {
        let contentType = request.headers["content-type"]?.lowercased() ?? ""
        guard contentType.hasPrefix("application/x-www-form-urlencoded") else {
            return "a change must be a form post (application/x-www-form-urlencoded)"
        }
        if let site = request.headers["sec-fetch-site"], !["same-origin", "none"].contains(site) {
            return "a change must come from this dashboard's own pages (Sec-Fetch-Site: \(site))"
        }
        if let origin = request.headers["origin"], let host = request.headers["host"],
            origin != "http://\(host)", origin != "https://\(host)"
        {
            return "a change must come from this dashboard's own pages (Origin \(origin))"
        }
        guard let sent = fields["csrf"], Self.constantTimeEquals(sent, token) else {
            return "the form's CSRF token is missing or stale: reload the page and try again"
        }
        return nil
    }

    /// Compares without an early exit, so the time taken tells nothing about the token.
    static func constantTimeEquals(_ left: String, _ right: String) -> Bool {
        let a = Array(left.utf8)
        let b = Array(right.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
