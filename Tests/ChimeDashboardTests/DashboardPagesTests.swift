import ChimeCore
import ChimeWire
import Foundation
import HTTPServer
import Testing

@testable import ChimeDashboard

/// Pages escape what the cluster sends, render with a shard down, and changes need the CSRF
/// token and are refused when read-only.
@Suite struct DashboardPagesTests {
    static let token = String(repeating: "ab", count: 32)

    func router(readOnly: Bool = false) throws -> (DashboardRouter, FixedSource) {
        let source = try FixedSource.make()
        let router = DashboardRouter(
            source: source, history: MetricsHistory(), tail: EventTail(), csrf: CSRFGuard(token: Self.token), readOnly: readOnly)
        return (router, source)
    }

    func get(_ router: DashboardRouter, _ path: String, query: [String: String] = [:]) -> (Int, String) {
        let response = router.respond(to: HTTPRequest(method: "GET", path: path, query: query))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    func post(_ router: DashboardRouter, _ form: String, headers: [String: String]? = nil) -> (Int, String) {
        let sent = headers ?? ["content-type": "application/x-www-form-urlencoded", "host": "127.0.0.1:7790", "origin": "http://127.0.0.1:7790"]
        let response = router.respond(to: HTTPRequest(method: "POST", path: "/actions", headers: sent, body: Array(form.utf8)))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    @Test func escapesEveryValueFromTheCluster() throws {
        let (router, _) = try router()
        let pages = [
            get(router, "/"), get(router, "/workers"), get(router, "/reminders", query: ["recipient": "<b>bob</b>"]),
            get(router, "/reminders/detail", query: ["recipient": "<b>bob</b>", "id": FixedSource.hostile]),
            get(router, "/dead-letters"), get(router, "/events", query: ["recipient": "\"><script>x</script>"]),
            get(router, "/recipients", query: ["recipient": "<b>bob</b>"]),
        ]
        for (status, html) in pages {
            #expect(status == 200)
            #expect(!html.contains("<script>alert"))
            #expect(!html.contains("<img src=x"))
            #expect(!html.contains("<b>bob</b>"))
            #expect(!html.contains("<script>x"))
            #expect(html.contains("<script src=\"/assets/dashboard.js\" defer></script>"))
        }
        #expect(pages[1].1.contains(
            "<td><span class=\"id\" title=\"&lt;script&gt;alert(1)&lt;/script&gt;\">&lt;script&gt;alert(1)&lt;/script&gt;</span></td>"
                + "<td><span class=\"id\" title=\"h&lt;1&gt;\">h&lt;1&gt;</span></td>"))
        #expect(pages[2].1.contains("href=\"/reminders/detail?recipient=%3Cb%3Ebob%3C%2Fb%3E&amp;id=%3Cscript%3Ealert%281%29%3C%2Fscript%3E\""))
        #expect(pages[2].1.contains("cursor=c%3C1%3E"))
        #expect(pages[3].1.contains("<tr><th>Body</th><td>&lt;img src=x onerror=alert(2)&gt;</td></tr>"))
        #expect(pages[4].1.contains("<td class=\"cause\">webhook:https://x/ refused: HTTP 400: &lt;img src=x onerror=alert(3)&gt;</td>"))
        #expect(pages[3].1.contains("&lt;b&gt;bold&lt;/b&gt;"))
        #expect(pages[5].1.contains("value=\"&quot;&gt;&lt;script&gt;x&lt;/script&gt;\""))
        #expect(pages[6].1.contains("<td>&lt;script&gt;alert(1)&lt;/script&gt;</td><td class=\"level\">active</td>"))
    }

    @Test func overviewRendersTheShardThatAnsweredAndNamesTheDownOne() throws {
        let (router, _) = try router()
        let (status, html) = get(router, "/")
        #expect(status == 200)
        #expect(html.contains("<p class=\"banner partial\">Shard 1 is down: shard 1 did not answer within 1000 ms. The other shards are shown.</p>"))
        #expect(html.contains("<tr data-shard=\"0\"><td>0</td><td class=\"up\">active</td><td class=\"number\">3</td><td class=\"number pending\">7</td>"))
        #expect(html.contains("<td class=\"number\">1.5 / 9.2 / 12.0</td>") || html.contains("<td class=\"number\">1.5 / 9.3 / 12.0</td>"))
        #expect(html.contains("<tr data-shard=\"1\"><td>1</td><td class=\"down\">down</td>"))
        #expect(html.contains("pending reminders <b id=\"total-pending\">7</b>"))
        let api = router.respond(to: HTTPRequest(method: "GET", path: "/api/overview"))
        let decoded = try WireCodec().decode(OverviewView.self, from: Data(api.body))
        #expect(decoded.shards.map(\.phase) == ["active", "down"])
        #expect(decoded.isPartial)
    }

    @Test func responsesCarryAStrictContentSecurityPolicy() throws {
        let (router, _) = try router()
        let response = router.respond(to: HTTPRequest(method: "GET", path: "/"))
        #expect(response.headers["Content-Security-Policy"]?.hasPrefix("default-src 'none'; script-src 'self'; style-src 'self'") == true)
        #expect(response.headers["X-Frame-Options"] == "DENY")
        let script = router.respond(to: HTTPRequest(method: "GET", path: "/assets/dashboard.js"))
        #expect(script.status == 200)
        #expect(script.contentType == "text/javascript; charset=utf-8")
    }

    @Test func changeWithoutTheCSRFTokenIsRefused() throws {
        let (router, source) = try router()
        let firing = "action=retry-all"
        #expect(post(router, firing + "&confirm=yes").0 == 403)
        #expect(post(router, firing + "&confirm=yes&csrf=" + String(repeating: "cd", count: 32)).0 == 403)
        let crossSite = ["content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "cross-site"]
        #expect(post(router, firing + "&confirm=yes&csrf=\(Self.token)", headers: crossSite).0 == 403)
        let otherOrigin = ["content-type": "application/x-www-form-urlencoded", "host": "127.0.0.1:7790", "origin": "http://evil.example"]
        #expect(post(router, firing + "&confirm=yes&csrf=\(Self.token)", headers: otherOrigin).0 == 403)
        let notAForm = ["content-type": "text/plain", "host": "127.0.0.1:7790"]
        #expect(post(router, firing + "&confirm=yes&csrf=\(Self.token)", headers: notAForm).0 == 403)
        #expect(source.performed.withLock { $0 }.isEmpty)
    }

    @Test func changeAsksForConfirmationThenActs() throws {
        let (router, source) = try router()
        let firing = try #require(source.deadLetterPage.items.first).firingId
        let form = "csrf=\(Self.token)&action=retry&firing=\(HTML.queryEncode(firing.description))"
        let (askStatus, ask) = post(router, form)
        #expect(askStatus == 200)
        #expect(ask.contains("<input type=\"hidden\" name=\"confirm\" value=\"yes\">"))
        #expect(source.performed.withLock { $0 }.isEmpty)
        let (status, done) = post(router, form + "&confirm=yes")
        #expect(status == 200)
        #expect(done.contains("<p class=\"banner notice\">done retry("))
        let performed = source.performed.withLock { $0 }
        #expect(performed.count == 1)
        if case .retry(let id) = performed.first {
            #expect(id == firing)
            #expect(id.reminder == ReminderID(FixedSource.hostile))
            #expect(id.recipient == RecipientID("<b>bob</b>"))
            #expect(id.dueAtMilliseconds == 1_798_099_200_000)
        } else {
            Issue.record("expected a retry, got \(performed)")
        }
    }

    @Test func readOnlyHidesButtonsAndRefusesChanges() throws {
        let (router, source) = try router(readOnly: true)
        #expect(!get(router, "/dead-letters").1.contains("<form class=\"inline\" method=\"post\""))
        #expect(!get(router, "/reminders/detail", query: ["recipient": "<b>bob</b>", "id": FixedSource.hostile]).1.contains("method=\"post\""))
        let (status, body) = post(router, "csrf=\(Self.token)&action=retry-all&confirm=yes")
        #expect(status == 403)
        #expect(body == "read-only: this dashboard was started with --read-only\n")
        #expect(source.performed.withLock { $0 }.isEmpty)
        let (writable, _) = try self.router()
        #expect(get(writable, "/dead-letters").1.contains("<form class=\"inline\" method=\"post\" action=\"/actions\">"))
    }

    @Test func eventTailKeepsTheNewestAndFiltersByRecipient() {
        let tail = EventTail(capacity: 3)
        for index in 1...5 {
            tail.append(topic: index % 2 == 0 ? "badge.bob" : "fire.alice", payload: Data("{\"n\":\(index)}".utf8), shard: 0)
        }
        #expect(tail.events(after: 0, recipient: nil).map(\.number) == [3, 4, 5])
        #expect(tail.events(after: 0, recipient: "alice").map(\.json) == ["{\"n\":3}", "{\"n\":5}"])
        #expect(tail.events(after: 4, recipient: nil).map(\.kind) == ["fire"])
        #expect(tail.lastNumber == 5)
    }

    @Test func historyKeepsTheLastSamplesPerShard() throws {
        let history = MetricsHistory(capacity: 2)
        let source = try FixedSource.make()
        for _ in 0..<3 { history.record(source.overview()) }
        #expect(history.samples(ofShard: 0).map(\.firingsPerSecond) == [4.25, 4.25])
        #expect(history.samples(ofShard: 1).map(\.dueBacklog) == [nil, nil])
        let points = zip([1, nil, 2, 4] as [Double?], 0...).map { SVGChart.Point(at: FixedSource.due + Double($1 * 10), value: $0) }
        let chart = SVGChart.render(title: "t<", unit: "m<s", points: points)
        // The lone first sample is a dot; the gap splits the line; x by time, y by value over the maximum (4).
        #expect(chart.text.contains(
            "<polyline class=\"line\" points=\"56.0,86.0 56.0,86.0\"/><polyline class=\"line\" points=\"253.3,60.0 352.0,8.0\"/>"))
        #expect(chart.text.contains("aria-label=\"t&lt; in m&lt;s over time (UTC)\""))
        #expect(chart.text.contains("<figcaption>t&lt;: 4 m&lt;s <span class=\"muted\">(max 4)</span></figcaption>"))
    }
}
