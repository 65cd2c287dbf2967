import ChimeCore
import ChimeWire
import Foundation
import HTTPServer
import Testing

@testable import ChimeDashboard

/// The recipient page and `/api/recipient`: a hostile recipient's registration, masked
/// destinations, attention settings and held firings, every value escaped; and why a
/// firing is held, worked out from the registration.
@Suite struct DashboardRecipientTests {
    static let bob = RecipientID("<b>bob</b>")
    /// 2026-12-24T22:30:00Z: 23:30 in Berlin, inside 22:00–07:00.
    static let nightDue = Date(timeIntervalSince1970: 1_798_151_400)
    /// 2026-12-25T06:00:00Z: 07:00 in Berlin, the end of that night's window.
    static let morning = Date(timeIntervalSince1970: 1_798_178_400)
    /// 2026-12-24T12:00:00Z: 13:00 in Berlin, outside every window.
    static let noon = Date(timeIntervalSince1970: 1_798_113_600)

    static func registration(summaryTimes: [Int] = []) -> Recipient {
        Recipient(
            id: bob, zone: "Europe/Berlin", token: Recipient.redactedToken,
            destinations: [
                .webhook(WebhookDestination(url: "https://hooks.example/<x>", secrets: [Destination.mask])),
                .apns(APNsDestination(token: "abcdef01…cdef", topic: "com.example.<app>", environment: .sandbox)),
            ],
            grants: [.timeSensitive], quietHours: [QuietWindow(start: 22 * 60, end: 7 * 60)],
            throttle: DeliveryThrottle(count: 2, seconds: 3600), optedOutCategories: ["<i>promo</i>"], summaryTimes: summaryTimes,
            breakThrough: QuietHoursBreakThrough(categories: ["<i>alarm</i>"], filterCriteria: ["work"]),
            optedOutChannels: ChannelOptOuts(["*": [.fcm], "<p>": [.webhook, .apns]]))
    }

    static func router() throws -> DashboardRouter {
        let base = try FixedSource.make()
        let json = """
            {"id":"\(FixedSource.hostile)","recipient":"<b>bob</b>","content":{"title":"\(FixedSource.hostile)","subtitle":"<i>sub</i>",
            "interruptionLevel":"passive","relevanceScore":0.75,"category":"<c>","unhandled":"replace","collapseKey":"k<1>"},
            "trigger":{"at":"2026-12-24T22:30:00Z"}}
            """
        let reminder = try WireCodec().decode(Reminder.self, from: Data(json.utf8))
        let held = [
            HeldFiringListing(firingId: FiringID(reminder.key, dueAt: nightDue), until: morning, reason: .quietHours),
            HeldFiringListing(firingId: FiringID(reminder.key, dueAt: noon), until: noon + 1800, reason: .throttle),
            // Held before reasons were recorded: no reason shown rather than a guessed one.
            HeldFiringListing(firingId: FiringID(reminder.key, dueAt: noon + 60), until: noon + 3600),
        ]
        let listing = ReminderListing(
            reminder: reminder, state: .pending, nextFireAt: nightDue, deliveredCount: 0, lastFiredAt: nil, held: held)
        let source = FixedSource(
            overview: base.overviewView, workers: base.workersView,
            reminders: PageView(items: [listing], nextCursor: "c<2>", partial: nil), deadLetters: base.deadLetterPage,
            registrations: [bob: RecipientResult(recipient: registration(), badge: 3, deliveredCount: 2)])
        return DashboardRouter(
            source: source, history: MetricsHistory(), tail: EventTail(), csrf: CSRFGuard(token: DashboardPagesTests.token), readOnly: false)
    }

    func get(_ router: DashboardRouter, _ path: String, query: [String: String]) -> (Int, String) {
        let response = router.respond(to: HTTPRequest(method: "GET", path: path, query: query))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    @Test func showsAHostileRecipientsSettingsEscapedWithDestinationsMasked() throws {
        let (status, html) = get(try Self.router(), "/recipients", query: ["recipient": "<b>bob</b>"])
        #expect(status == 200)
        #expect(!html.contains("<b>bob</b>"))
        #expect(!html.contains("<script>alert"))
        #expect(!html.contains("<i>"))
        #expect(html.contains("<title>Chime — Recipient &lt;b&gt;bob&lt;/b&gt;</title>"))
        #expect(html.contains("<a class=\"current\" href=\"/recipients\">Recipients</a>"))
        #expect(html.contains("<dt>Zone</dt><dd id=\"zone\">Europe/Berlin</dd>"))
        #expect(html.contains("<dd id=\"badge\">3 (2 delivered, unhandled)</dd>"))
        #expect(html.contains("<dd id=\"token\">configured (not shown)</dd>"))
        #expect(html.contains(
            "<li class=\"destination\"><span class=\"id\" title=\"webhook:https://hooks.example/&lt;x&gt;\">"
                + "webhook:https://hooks.example/&lt;x&gt;</span> <span class=\"muted\">(1 secret)</span></li>"))
        #expect(html.contains(
            "<li class=\"destination\"><span class=\"id\" title=\"apns:abcdef01…cdef\">apns:abcdef01…cdef</span> "
                + "<span class=\"muted\">(topic com.example.&lt;app&gt;, sandbox)</span></li>"))
        #expect(html.contains("<dd id=\"grants\">timeSensitive</dd>"))
        #expect(html.contains("<dd id=\"quiet-hours\">22:00–07:00 in Europe/Berlin</dd>"))
        #expect(html.contains("<dd id=\"summary-at\">none</dd>"))
        #expect(html.contains("<dd id=\"break-through\">time-sensitive and critical; categories &lt;i&gt;alarm&lt;/i&gt;; filter criteria work</dd>"))
        #expect(html.contains("<dd id=\"throttle\">at most 2 per 3600 s</dd>"))
        #expect(html.contains("<dd id=\"opt-outs\">&lt;i&gt;promo&lt;/i&gt;</dd>"))
        #expect(html.contains("<dd id=\"channel-opt-outs\">every firing: fcm; &lt;p&gt;: webhook, apns</dd>"))
        #expect(html.contains("value=\"&lt;b&gt;bob&lt;/b&gt;\""))
        #expect(html.contains("href=\"/recipients?recipient=%3Cb%3Ebob%3C%2Fb%3E&amp;cursor=c%3C2%3E\""))
    }

    @Test func listsTheRecipientsRemindersWithAttentionFieldsAndWhyEachHeldFiringWaits() throws {
        let (_, html) = get(try Self.router(), "/recipients", query: ["recipient": "<b>bob</b>"])
        #expect(html.contains(
            "<td>&lt;script&gt;alert(1)&lt;/script&gt;<br><span class=\"muted\">&lt;i&gt;sub&lt;/i&gt;</span></td><td class=\"level\">passive</td>"
                + "<td class=\"number\">0.75</td><td>&lt;c&gt;</td><td>replace</td><td>k&lt;1&gt;</td>"))
        let key = ReminderKey(ReminderID(FixedSource.hostile), of: Self.bob)
        let night = HTML.escape(FiringID(key, dueAt: Self.nightDue).description)
        let noon = HTML.escape(FiringID(key, dueAt: Self.noon).description)
        #expect(html.contains("<li class=\"held\" title=\"\(night)\">held until 2026-12-25T06:00:00.000Z (quiet hours)</li>"))
        #expect(html.contains("<li class=\"held\" title=\"\(noon)\">held until 2026-12-24T12:30:00.000Z (throttle)</li>"))
        let unknown = HTML.escape(FiringID(key, dueAt: Self.noon + 60).description)
        #expect(html.contains("<li class=\"held\" title=\"\(unknown)\">held until 2026-12-24T13:00:00.000Z</li>"))
    }

    @Test func reminderDetailShowsItsLevelAndHeldFiringsLinkingToWhy() throws {
        let (status, html) = get(try Self.router(), "/reminders/detail", query: ["recipient": "<b>bob</b>", "id": FixedSource.hostile])
        #expect(status == 200)
        #expect(html.contains("<tr><th>Interruption level</th><td id=\"level\">passive</td></tr><tr><th>Relevance</th><td>0.75</td></tr>"))
        #expect(html.contains(">held until 2026-12-25T06:00:00.000Z</li>"))
        #expect(html.contains("<a href=\"/recipients?recipient=%3Cb%3Ebob%3C%2Fb%3E\">Why: the recipient's settings</a>"))
    }

    @Test func apiAnswersTheSameViewAndRefusesAMissingRecipient() throws {
        let router = try Self.router()
        let response = router.respond(to: HTTPRequest(method: "GET", path: "/api/recipient", query: ["recipient": "<b>bob</b>"]))
        #expect(response.status == 200)
        let view = try WireCodec().decode(RecipientView.self, from: Data(response.body))
        #expect(view.recipient == "<b>bob</b>")
        #expect(view.registration?.recipient.zone == "Europe/Berlin")
        #expect(view.registration?.recipient.token == Recipient.redactedToken)
        #expect(view.reminders.items.count == 1)
        #expect(view.holdReasons.values.sorted() == ["quiet hours", "throttle"])
        let missing = router.respond(to: HTTPRequest(method: "GET", path: "/api/recipient", query: [:]))
        #expect(missing.status == 400)
        #expect(String(decoding: missing.body, as: UTF8.self).contains("\"code\":\"invalid_argument\""))
    }

    @Test func anUnregisteredRecipientStillShowsItsReminders() throws {
        let (status, html) = get(try Self.router(), "/recipients", query: ["recipient": "carol"])
        #expect(status == 200)
        #expect(html.contains("<p id=\"registration\" class=\"muted\">Not registered: no zone, destinations or attention settings (chime register).</p>"))
        #expect(html.contains("<table id=\"recipient-reminders\">"))
        let (emptyStatus, empty) = get(try Self.router(), "/recipients", query: [:])
        #expect(emptyStatus == 200)
        #expect(empty.contains("Name a recipient to see its settings, destinations and reminders."))
    }

    @Test func reminderRowsAndTheSearchLinkToTheRecipientPage() throws {
        let router = try DashboardPagesTests().router().0
        let (_, html) = get(router, "/reminders", query: ["recipient": "<b>bob</b>"])
        #expect(html.contains(
            "<td><a class=\"id\" href=\"/recipients?recipient=%3Cb%3Ebob%3C%2Fb%3E\" title=\"&lt;b&gt;bob&lt;/b&gt;\">&lt;b&gt;bob&lt;/b&gt;</a></td>"))
        #expect(html.contains(
            "<p><a id=\"recipient-link\" href=\"/recipients?recipient=%3Cb%3Ebob%3C%2Fb%3E\">Recipient page of &lt;b&gt;bob&lt;/b&gt;</a>"))
    }
}
