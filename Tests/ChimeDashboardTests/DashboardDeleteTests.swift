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
