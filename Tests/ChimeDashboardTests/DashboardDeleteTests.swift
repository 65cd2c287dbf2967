import ChimeCore
import ChimeWire
import Foundation
import HTTPServer
import Testing

@testable import ChimeDashboard

/// The Dead letters page's Delete button: a confirmation page first, then the delete, and
/// nothing without the CSRF token.
@Suite struct DashboardDeleteTests {
    static let token = String(repeating: "ef", count: 32)
    static let formHeaders = ["content-type": "application/x-www-form-urlencoded", "host": "127.0.0.1:7790", "origin": "http://127.0.0.1:7790"]

    func post(_ router: DashboardRouter, _ form: String) -> (Int, String) {
        let response = router.respond(to: HTTPRequest(method: "POST", path: "/actions", headers: Self.formHeaders, body: Array(form.utf8)))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    @Test func deleteAsksForConfirmationThenDeletes() throws {
        let source = try FixedSource.make()
        let router = DashboardRouter(
            source: source, history: MetricsHistory(), tail: EventTail(), csrf: CSRFGuard(token: Self.token), readOnly: false)
        let firing = try #require(source.deadLetterPage.items.first).firingId
        let page = String(decoding: router.respond(to: HTTPRequest(method: "GET", path: "/dead-letters")).body, as: UTF8.self)
        let encoded = HTML.escape(firing.description)
        #expect(page.contains(
            "<input type=\"hidden\" name=\"action\" value=\"delete\"><input type=\"hidden\" name=\"firing\" value=\"\(encoded)\"><button type=\"submit\" class=\"danger\">Delete</button>"))
        let form = "csrf=\(Self.token)&action=delete&firing=\(HTML.queryEncode(firing.description))"
        #expect(post(router, "action=delete&firing=\(HTML.queryEncode(firing.description))&confirm=yes").0 == 403)
        let (askStatus, ask) = post(router, form)
        #expect(askStatus == 200)
        #expect(ask.contains("<p id=\"question\">Delete dead letter \(encoded)? It is removed for good and never fires.</p>"))
        #expect(source.performed.withLock { $0 }.isEmpty)
        let (status, done) = post(router, form + "&confirm=yes")
        #expect(status == 200)
        #expect(done.contains("<a href=\"/dead-letters\">Back</a>"))
        #expect(source.performed.withLock { $0 } == [.deleteDeadLetter(firing)])
        #expect(post(router, "csrf=\(Self.token)&action=delete&firing=nonsense&confirm=yes").0 == 400)
    }
}

/// The Workers page shows capacity, leases and quarantine, and "-" for a coordinator that
/// does not send them.
@Suite struct DashboardWorkersColumnsTests {
    @Test func capacityLeasesAndQuarantineAreShown() {
        let seen = Date(timeIntervalSince1970: 1_798_099_200)
        let view = WorkersView(workers: [
            WorkerRow(shard: 0, worker: WorkerReport(
                id: "w1", host: "h", pid: 7, alive: true, lastSeenAt: seen, acknowledged: 1, delivered: 2,
                capacity: 64, leases: 3, quarantined: true)),
            WorkerRow(shard: 1, worker: WorkerReport(id: "w2", host: "h", pid: 8, alive: false, lastSeenAt: seen, acknowledged: 0, delivered: 0)),
        ], missing: [])
        let html = DashboardPages.workers(view, now: seen).render(readOnly: false).text
        #expect(html.contains("<th class=\"number\">Capacity</th><th class=\"number\">Leases</th><th>Quarantined</th>"))
        #expect(html.contains("<td class=\"up\">yes</td><td class=\"number\">64</td><td class=\"number\">3</td><td class=\"down\">yes</td>"))
        #expect(html.contains("<td class=\"down\">no</td><td class=\"number\">-</td><td class=\"number\">-</td><td>-</td>"))
    }
}
