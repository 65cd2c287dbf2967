import ChimeCore
import ChimeWire
import Foundation

extension DashboardPages {
    /// The search form and one page of reminders, with a link to the next page.
    public static func reminders(_ search: ReminderSearch, page: Result<PageView<ReminderListing>, WireError>?) -> DashboardPage {
        var problems: [String] = []
        var table: HTML = "<p class=\"muted\">Search by recipient, by reminder id, or both; leave both empty to list every reminder.</p>"
        switch page {
        case .none: break
        case .failure(let error): problems.append("\(error.code.rawValue): \(error.message)")
        case .success(let page):
            if let partial = page.partial { problems.append(partial) }
            let rows = page.items.map { listing -> HTML in
                let reminder = listing.reminder
                return """
                    <tr><td>\(identifier(reminder.id.rawValue, link: reminderLink(recipient: reminder.recipient.rawValue, id: reminder.id.rawValue)))</td>\
                    <td>\(identifier(reminder.recipient.rawValue, link: recipientLink(reminder.recipient.rawValue)))</td>\
                    <td class="state">\(listing.state.rawValue)</td>\
                    <td>\(instant(listing.nextFireAt))</td><td>\(reminder.content.title, or: "")</td></tr>
                    """
            }
            table = rows.isEmpty
                ? "<p>No reminders match.</p>"
                : """
                    <table id="reminders"><thead><tr><th>Id</th><th>Recipient</th><th>State</th><th>Next fire (UTC)</th>\
                    <th>Title</th></tr></thead><tbody>\(rows)</tbody></table>
                    """
            if let next = page.nextCursor {
                table = """
                    \(table)<p><a id="next" href="/reminders?recipient=\(query: search.recipient ?? "")&amp;id=\(query: search.id ?? "")\
                    &amp;cursor=\(query: next)">Next page</a></p>
                    """
            }
        }
        let recipientPage: HTML = search.recipient.map { recipient -> HTML in
            """
            <p><a id="recipient-link" href="\(recipientLink(recipient))">Recipient page of \(recipient)</a>: zone, destinations, \
            attention settings, held firings.</p>
            """
        } ?? .empty
        let content: HTML = """
            \(recipientPage)<form method="get" action="/reminders"><label>Recipient <input name="recipient" value="\(search.recipient ?? "")"></label> \
            <label>Reminder id <input name="id" value="\(search.id ?? "")"></label> <button type="submit">Search</button></form>\(table)
            """
        return DashboardPage(title: "Reminders", section: "/reminders", problems: problems, content: content)
    }

    /// One reminder: state, trigger, next fire in UTC and the recipient's zone, attention
    /// level and relevance, held firings (why: on the recipient page), content, the firings
    /// the dashboard saw, and the enable/disable/cancel buttons.
    public static func reminderDetail(
        _ listing: ReminderListing?, recipient: String, id: String, history: [TailEvent], context: FormContext, error: WireError? = nil
    ) -> DashboardPage {
        guard let listing else {
            let why = error.map { "\($0.code.rawValue): \($0.message)" } ?? "No reminder \(id) of \(recipient)."
            return DashboardPage(title: "Reminder", section: "/reminders", problems: [why], content: "<p><a href=\"/reminders\">Search</a></p>")
        }
        let reminder = listing.reminder
        let codec = WireCodec()
        let trigger = String(decoding: codec.encode(reminder.trigger), as: UTF8.self)
        let content = String(decoding: codec.encode(reminder.content), as: UTF8.self)
        var local = "-"
        if let next = listing.nextFireAt, let zoneName = reminder.trigger.timeZoneIdentifier, let zone = TimeZone(identifier: zoneName) {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = zone
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss xxx"
            local = "\(formatter.string(from: next)) (\(zoneName))"
        }
        let buttons: HTML = """
            \(ActionForm.button(.setEnabled(reminder.id, recipient: reminder.recipient, enabled: true), label: "Enable", context: context)) \
            \(ActionForm.button(.setEnabled(reminder.id, recipient: reminder.recipient, enabled: false), label: "Disable", context: context)) \
            \(ActionForm.button(.cancel(reminder.id, recipient: reminder.recipient), label: "Cancel", context: context, danger: true))
            """
        let holds = (listing.held ?? []).map { held -> HTML in
            "<li title=\"\(held.firingId.description)\">held until \(instant(held.until))</li>"
        }
        let held: HTML = holds.isEmpty
            ? "none"
            : "<ul>\(holds)</ul><a href=\"\(recipientLink(reminder.recipient.rawValue))\">Why: the recipient's settings</a>"
        let firings = history.map { event -> HTML in
            "<tr><td>\(event.number)</td><td>\(instant(event.receivedAt))</td><td>\(event.kind)</td><td><code>\(event.json)</code></td></tr>"
        }
        let body: HTML = """
            <table id="detail"><tbody>\
            <tr><th>Id</th><td>\(reminder.id.rawValue)</td></tr>\
            <tr><th>Recipient</th><td><a href="\(recipientLink(reminder.recipient.rawValue))">\(reminder.recipient.rawValue)</a></td></tr>\
            <tr><th>State</th><td id="state">\(listing.state.rawValue)</td></tr>\
            <tr><th>Enabled</th><td>\(reminder.enabled ? "yes" : "no")</td></tr>\
            <tr><th>Next fire (UTC)</th><td>\(instant(listing.nextFireAt))</td></tr><tr><th>Next fire (local)</th><td>\(local)</td></tr>\
            <tr><th>Last fired (UTC)</th><td>\(instant(listing.lastFiredAt))</td></tr>\
            <tr><th>Delivered, unhandled</th><td>\(listing.deliveredCount)</td></tr>\
            <tr><th>Interruption level</th><td id="level">\(reminder.content.interruptionLevel.rawValue)</td></tr>\
            <tr><th>Relevance</th><td>\(reminder.content.relevanceScore.map { SVGChart.label($0) } ?? "-")</td></tr>\
            <tr><th>Held firings</th><td id="held">\(held)</td></tr>\
            <tr><th>Title</th><td>\(reminder.content.title, or: "")</td></tr><tr><th>Body</th><td>\(reminder.content.body, or: "")</td></tr>\
            <tr><th>Trigger</th><td><pre>\(trigger)</pre></td></tr><tr><th>Content</th><td><pre>\(content)</pre></td></tr>\
            </tbody></table><p>\(buttons)</p>
            <h2>Firings seen by this dashboard</h2>\
            \(firings.isEmpty ? "<p class=\"muted\">None since the dashboard started.</p>" as HTML : "<table><tbody>\(firings)</tbody></table>")
            """
        return DashboardPage(title: "Reminder \(reminder.id.rawValue)", section: "/reminders", content: body)
    }
}
