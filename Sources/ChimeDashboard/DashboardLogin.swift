import Foundation
import HTTPServer
import Synchronization

/// The dashboard's login when it is started with a token file: the token (compared in
/// constant time) and the server-side table of sessions it grants. A browser logs in with a
/// form and gets a random session id in an `HttpOnly`, `SameSite=Strict` cookie (`Secure`
/// too over TLS); a script sends `Authorization: Bearer TOKEN` instead. Sessions expire
/// ``sessionLifetime`` after login and end at logout; they live in memory only, so a
/// restart logs everyone out. Safe to use from the HTTP server's threads at once.
public final class DashboardLogin: Sendable {
    /// The cookie that carries the session id.
    public static let cookieName = "chime_session"
    /// The most sessions kept; a login past it ends the one that expires first.
    public static let maximumSessions = 1024
    /// The shortest token accepted, in bytes (a guessable token is refused at start).
    public static let minimumTokenBytes = 16
    /// The largest token file read, in bytes.
    public static let maximumTokenFileBytes = 4096

    /// How long a session lasts after login, in seconds.
    public let sessionLifetime: TimeInterval
    /// Whether the cookie says `Secure` (the dashboard serves HTTPS).
    public let secureCookies: Bool
    private let token: [UInt8]
    private let clock: @Sendable () -> Date
    private let sessions = Mutex<[String: Date]>([:])

    /// A login that accepts `token`.
    /// - Parameters:
    ///   - sessionLifetime: seconds a session lasts (default 12 hours).
    ///   - clock: the time now (tests pass a fixed one).
    public init(
        token: String, secureCookies: Bool, sessionLifetime: TimeInterval = 12 * 3600,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.token = Array(token.utf8)
        self.secureCookies = secureCookies
        self.sessionLifetime = sessionLifetime
        self.clock = clock
    }

    /// Whether `candidate` is the token (no early exit on the first differing byte).
    public func accepts(token candidate: String) -> Bool {
        CSRFGuard.constantTimeEquals(candidate, String(decoding: token, as: UTF8.self))
    }

    /// A new session: 32 random bytes (the kernel's `getrandom`) as 64 hexadecimal digits.
    /// Expired sessions are dropped first; past ``maximumSessions`` the one expiring first ends.
    public func startSession() -> String {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        let now = clock()
        sessions.withLock { table in
            table = table.filter { $0.value > now }
            if table.count >= Self.maximumSessions, let first = table.min(by: { $0.value < $1.value }) {
                table[first.key] = nil
            }
            table[id] = now.addingTimeInterval(sessionLifetime)
        }
        return id
    }

    /// Whether `id` names a session that has not expired or ended.
    public func isLive(session id: String) -> Bool {
        let now = clock()
        return sessions.withLock { table in
            guard let expiry = table[id] else { return false }
            if expiry <= now {
                table[id] = nil
                return false
            }
            return true
        }
    }

    /// Ends session `id` (nothing when there is none).
    public func endSession(_ id: String) {
        _ = sessions.withLock { $0.removeValue(forKey: id) }
    }

    /// The number of live sessions.
    public var liveSessions: Int {
        let now = clock()
        return sessions.withLock { $0.values.filter { $0 > now }.count }
    }

    /// Whether `request` is logged in: `Authorization: Bearer TOKEN` or a live session cookie.
    public func authorizes(_ request: HTTPRequest) -> Bool {
        if let bearer = Self.bearer(in: request) { return accepts(token: bearer) }
        guard let id = Self.session(in: request) else { return false }
        return isLive(session: id)
    }

    /// The token of an `Authorization: Bearer …` header, or `nil`.
    static func bearer(in request: HTTPRequest) -> String? {
        guard let value = request.headers["authorization"] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }

    /// The session id in the request's `Cookie` header, or `nil`.
    static func session(in request: HTTPRequest) -> String? {
        guard let header = request.headers["cookie"] else { return nil }
        for pair in header.split(separator: ";") {
            let trimmed = pair.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix(cookieName + "=") { return String(trimmed.dropFirst(cookieName.count + 1)) }
        }
        return nil
    }

    /// The `Set-Cookie` value that gives the browser session `id`.
    public func cookie(for id: String) -> String {
        "\(Self.cookieName)=\(id); Path=/; Max-Age=\(Int(sessionLifetime)); HttpOnly; SameSite=Strict\(secureCookies ? "; Secure" : "")"
    }

    /// The `Set-Cookie` value that makes the browser forget its session.
    public var clearingCookie: String {
        "\(Self.cookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict\(secureCookies ? "; Secure" : "")"
    }

    /// Reads a token file: its text without surrounding white space.
    /// - Throws: ``DashboardLoginError`` when the file is missing, over 4 KiB, readable or
    ///   writable by group or others (`chmod 600`), or holds fewer than 16 bytes of token.
    public static func readToken(path: String) throws(DashboardLoginError) -> String {
        guard let data = FileManager.default.contents(atPath: path), data.count <= maximumTokenFileBytes else {
            throw DashboardLoginError("\(path): cannot read the token file (missing, unreadable or over \(maximumTokenFileBytes) bytes)")
        }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue
        else {
            throw DashboardLoginError("\(path): cannot read the token file's permissions")
        }
        guard mode & 0o077 == 0 else {
            throw DashboardLoginError(
                "\(path) holds the dashboard's login token and has mode \(String(mode, radix: 8)); allow only its owner (chmod 600 \(path))")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard token.utf8.count >= minimumTokenBytes, !token.contains(where: { $0.isWhitespace || $0.isNewline }) else {
            throw DashboardLoginError(
                "\(path): the token must be one word of at least \(minimumTokenBytes) bytes (for example: openssl rand -hex 32)")
        }
        return token
    }
}

/// A token file the dashboard cannot use; `message` says why.
public struct DashboardLoginError: Error, Sendable {
    /// A sentence for people.
    public var message: String
    /// Creates the value from its message.
    public init(_ message: String) { self.message = message }
}
