import ChimeCore
import Foundation
import HTTPServer
import Synchronization
import Testing

@testable import ChimeDashboard

/// With a token every page and API call needs a login: the form sets a session cookie, a
/// wrong token is refused, an expired or ended session is refused, a bearer token works.
@Suite struct DashboardLoginTests {
    static let token = "s3cret-token-of-32-bytes-0123456"
    static let csrf = String(repeating: "cd", count: 32)
    static let formHeaders = ["content-type": "application/x-www-form-urlencoded", "host": "127.0.0.1:7790"]

    /// A clock the test moves.
    final class Clock: Sendable {
        let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        func advance(_ seconds: TimeInterval) { now.withLock { $0 += seconds } }
        var read: @Sendable () -> Date { { [self] in now.withLock { $0 } } }
    }

    func router(secure: Bool = true, clock: Clock = Clock()) throws -> (DashboardRouter, DashboardLogin) {
        let login = DashboardLogin(token: Self.token, secureCookies: secure, sessionLifetime: 60, clock: clock.read)
        let router = DashboardRouter(
            source: try FixedSource.make(), history: MetricsHistory(), tail: EventTail(), csrf: CSRFGuard(token: Self.csrf),
            readOnly: false, login: login)
        return (router, login)
    }

    func send(_ router: DashboardRouter, _ method: String, _ path: String, headers: [String: String] = [:], form: String? = nil)
        -> HTTPResponse
    {
        router.respond(to: HTTPRequest(method: method, path: path, headers: headers, body: Array((form ?? "").utf8)))
    }

    func logIn(_ router: DashboardRouter) throws -> String {
        let answer = send(router, "POST", "/login", headers: Self.formHeaders, form: "token=\(Self.token)")
        #expect(answer.status == 303)
        #expect(answer.headers["Location"] == "/")
        let cookie = try #require(answer.headers["Set-Cookie"])
        let id = String(try #require(cookie.split(separator: ";").first).dropFirst("chime_session=".count))
        #expect(id.count == 64)
        #expect(cookie == "chime_session=\(id); Path=/; Max-Age=60; HttpOnly; SameSite=Strict; Secure")
        return id
    }

    @Test func withoutLoginPagesRedirectAndTheAPIAnswers401() throws {
        let (router, _) = try router()
        let page = send(router, "GET", "/workers")
        #expect(page.status == 303)
        #expect(page.headers["Location"] == "/login")
        let api = send(router, "GET", "/api/overview")
        #expect(api.status == 401)
        #expect(api.headers["WWW-Authenticate"] == "Bearer realm=\"chime dashboard\"")
        let action = send(router, "POST", "/actions", headers: Self.formHeaders, form: "csrf=\(Self.csrf)&action=retry-all&confirm=yes")
        #expect(action.status == 401)
        #expect(send(router, "GET", "/healthz").status == 200)
        #expect(send(router, "GET", "/assets/dashboard.css").status == 200)
        let form = send(router, "GET", "/login")
        #expect(form.status == 200)
        let html = String(decoding: form.body, as: UTF8.self)
        #expect(html.contains("<form method=\"post\" action=\"/login\">"))
        #expect(!html.contains(Self.csrf))
        #expect(form.headers["Content-Security-Policy"] != nil)
    }

    @Test func aWrongTokenIsRefusedWith401AndNoCookie() throws {
        let (router, login) = try router()
        for form in ["token=wrong", "token=\(Self.token)x", "token=", "nothing=1"] {
            let answer = send(router, "POST", "/login", headers: Self.formHeaders, form: form)
            #expect(answer.status == 401)
            #expect(answer.headers["Set-Cookie"] == nil)
            #expect(String(decoding: answer.body, as: UTF8.self).contains("<p class=\"banner partial\">Wrong token.</p>"))
        }
        #expect(login.liveSessions == 0)
        let crossSite = send(router, "POST", "/login", headers: Self.formHeaders.merging(["sec-fetch-site": "cross-site"]) { $1 },
            form: "token=\(Self.token)")
        #expect(crossSite.status == 403)
    }

    @Test func theSessionCookieIsAcceptedUntilLogout() throws {
        let (router, login) = try router()
        let id = try logIn(router)
        let cookie = ["cookie": "theme=dark; chime_session=\(id)"]
        #expect(send(router, "GET", "/workers", headers: cookie).status == 200)
        #expect(send(router, "GET", "/api/overview", headers: cookie).status == 200)
        #expect(send(router, "GET", "/login", headers: cookie).status == 303)
        let page = String(decoding: send(router, "GET", "/", headers: cookie).body, as: UTF8.self)
        #expect(page.contains("<form class=\"inline\" method=\"post\" action=\"/logout\"><button type=\"submit\">Log out</button></form>"))
        #expect(login.liveSessions == 1)
        let out = send(router, "POST", "/logout", headers: cookie)
        #expect(out.status == 303)
        #expect(out.headers["Set-Cookie"] == "chime_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict; Secure")
        #expect(login.liveSessions == 0)
        #expect(send(router, "GET", "/workers", headers: cookie).status == 303)
        #expect(send(router, "GET", "/workers", headers: ["cookie": "chime_session=\(String(repeating: "0", count: 64))"]).status == 303)
    }

    @Test func anExpiredSessionIsRefused() throws {
        let clock = Clock()
        let (router, login) = try router(secure: false, clock: clock)
        let answer = send(router, "POST", "/login", headers: Self.formHeaders, form: "token=\(Self.token)")
        let setCookie = try #require(answer.headers["Set-Cookie"])
        #expect(!setCookie.contains("Secure"))
        let id = String(try #require(setCookie.split(separator: ";").first).dropFirst("chime_session=".count))
        clock.advance(59)
        #expect(send(router, "GET", "/api/workers", headers: ["cookie": "chime_session=\(id)"]).status == 200)
        clock.advance(1)
        #expect(send(router, "GET", "/api/workers", headers: ["cookie": "chime_session=\(id)"]).status == 401)
        #expect(login.liveSessions == 0)
    }

    @Test func aBearerTokenOpensTheAPIAndAWrongOneDoesNot() throws {
        let (router, _) = try router()
        #expect(send(router, "GET", "/api/workers", headers: ["authorization": "Bearer \(Self.token)"]).status == 200)
        #expect(send(router, "GET", "/api/workers", headers: ["authorization": "bearer \(Self.token)"]).status == 200)
        #expect(send(router, "GET", "/api/workers", headers: ["authorization": "Bearer nope"]).status == 401)
        #expect(send(router, "GET", "/workers", headers: ["authorization": "Bearer nope"]).status == 401)
        #expect(send(router, "GET", "/api/workers", headers: ["authorization": "Basic \(Self.token)"]).status == 401)
    }

    @Test func sessionsPastTheLimitEndTheOldest() {
        let clock = Clock()
        let login = DashboardLogin(token: Self.token, secureCookies: true, sessionLifetime: 3600, clock: clock.read)
        let first = login.startSession()
        clock.advance(1)
        for _ in 1..<DashboardLogin.maximumSessions { _ = login.startSession() }
        #expect(login.liveSessions == DashboardLogin.maximumSessions)
        #expect(login.isLive(session: first))
        _ = login.startSession()
        #expect(login.liveSessions == DashboardLogin.maximumSessions)
        #expect(!login.isLive(session: first))
    }

    @Test func tokenFilesMustBeOwnerOnlyAndLongEnough() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-login-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("token").path
        try "\(Self.token)\n".write(toFile: path, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
        #expect(throws: DashboardLoginError.self) { try DashboardLogin.readToken(path: path) }
        do {
            _ = try DashboardLogin.readToken(path: path)
        } catch {
            #expect(error.message == "\(path) holds the dashboard's login token and has mode 640; allow only its owner (chmod 600 \(path))")
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        #expect(try DashboardLogin.readToken(path: path) == Self.token)
        try "short\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: DashboardLoginError.self) { try DashboardLogin.readToken(path: path) }
        #expect(throws: DashboardLoginError.self) { try DashboardLogin.readToken(path: path + ".missing") }
    }
}
