import Foundation
import HTTPServer
import Testing

@testable import ChimeDashboard

/// DNS rebinding: a loopback dashboard answers only its own names, and a post from another
/// site's page is refused, the login and logout included.
@Suite struct DashboardHostsTests {
    static let loopback = DashboardHosts.serving(HTTPListenAddress(host: "127.0.0.1", port: 7790), allowing: [])

    @Test(arguments: [
        ("127.0.0.1:7790", "127.0.0.1"), ("LOCALHOST:80", "localhost"), ("[::1]:7790", "::1"), ("[::1]", "::1"),
        ("example.com", "example.com"), ("::1", "::1"),
    ])
    func hostNamesDropThePortAndTheBrackets(header: String, name: String) {
        #expect(DashboardHosts.hostName(header) == name)
    }

    @Test(arguments: ["", ":7790", "[::1", "[::1]x", "a/b:1", "user@127.0.0.1", "127.0.0.1:port"])
    func malformedHostsHaveNoName(header: String) {
        #expect(DashboardHosts.hostName(header) == nil)
    }

    @Test func aLoopbackListenerAnswersOnlyLoopbackNamesAndTheAllowedOnes() {
        for host in ["127.0.0.1:7790", "localhost:7790", "[::1]:7790", "localhost"] { #expect(Self.loopback.accepts(host)) }
        for host in ["evil.example:7790", "127.0.0.1.nip.io:7790", "0.0.0.0:7790", "", "[::2]:7790"] { #expect(!Self.loopback.accepts(host)) }
        #expect(!Self.loopback.accepts(nil))
        let proxied = DashboardHosts.serving(HTTPListenAddress(host: "127.0.0.1", port: 7790), allowing: ["Dash.Example.org"])
        #expect(proxied.accepts("dash.example.org:443"))
        #expect(DashboardHosts.serving(HTTPListenAddress(host: "0.0.0.0", port: 7790), allowing: []) == .any)
        let named = DashboardHosts.serving(HTTPListenAddress(host: "10.0.0.5", port: 7790), allowing: ["chime-dashboard"])
        #expect(named.accepts("chime-dashboard:7790") && named.accepts("10.0.0.5:7790") && !named.accepts("evil.example"))
    }

    func router(login: DashboardLogin? = nil) throws -> DashboardRouter {
        DashboardRouter(
            source: try FixedSource.make(), history: MetricsHistory(), tail: EventTail(), csrf: CSRFGuard(token: String(repeating: "ab", count: 32)),
            readOnly: false, login: login, hosts: Self.loopback)
    }

    @Test func aRebindingRequestIsRefused421OnEveryRoute() throws {
        let router = try router()
        for path in ["/", "/workers", "/reminders", "/dead-letters", "/events", "/api/overview", "/api/reminders", "/healthz", "/login"] {
            let response = router.respond(to: HTTPRequest(method: "GET", path: path, headers: ["host": "evil.example:7790"]))
            #expect(response.status == 421, "\(path)")
            #expect(!String(decoding: response.body, as: UTF8.self).contains("csrf"))
        }
        let own = router.respond(to: HTTPRequest(method: "GET", path: "/", headers: ["host": "localhost:7790"]))
        #expect(own.status == 200)
    }

    @Test func aPostFromAnotherSiteIsRefusedTheLoginAndLogoutIncluded() throws {
        let login = DashboardLogin(token: "0123456789abcdef0123", secureCookies: false)
        let router = try router(login: login)
        let form = ["content-type": "application/x-www-form-urlencoded", "host": "127.0.0.1:7790"]
        for path in ["/logout", "/login", "/actions"] {
            for foreign in [["origin": "http://evil.example"], ["origin": "null"], ["sec-fetch-site": "cross-site"], ["origin": "http://127.0.0.1.evil:7790"]] {
                let response = router.respond(
                    to: HTTPRequest(method: "POST", path: path, headers: form.merging(foreign) { $1 }, body: Array("token=x".utf8)))
                #expect(response.status == 403, "\(path) \(foreign)")
            }
        }
        // The same logout from the dashboard's own page goes through (303 to the login).
        let own = router.respond(to: HTTPRequest(method: "POST", path: "/logout", headers: form.merging(["origin": "http://127.0.0.1:7790"]) { $1 }))
        #expect(own.status == 303)
    }
}
