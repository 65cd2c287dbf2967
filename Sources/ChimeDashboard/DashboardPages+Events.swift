import Foundation

extension DashboardPages {
    /// The live tail: the newest events first (of one recipient when filtered); the script
    /// adds newer ones every second from `/api/events`, and without it a reload shows them.
    public static func events(_ events: [TailEvent], recipient: String?, lastNumber: UInt64) -> DashboardPage {
        let rows = events.reversed().map { event -> HTML in
            """
            <tr><td>\(event.number)</td><td>\(instant(event.receivedAt))</td><td>\(event.shard)</td><td>\(event.kind)</td>\
            <td>\(event.recipient)</td><td><code>\(event.json)</code></td></tr>
            """
        }
        let content: HTML = """
            <form method="get" action="/events"><label>Recipient <input name="recipient" value="\(recipient ?? "")"></label> \
            <button type="submit">Filter</button></form>
            <p class="muted">Fire, badge and action events as the shards publish them, newest first (the last \
            \(events.count) kept here; the page adds new ones every second).</p>
            <table><thead><tr><th>#</th><th>Received (UTC)</th><th>Shard</th><th>Kind</th><th>Recipient</th><th>Event</th></tr></thead>\
            <tbody id="tail" data-after="\(lastNumber)" data-recipient="\(recipient ?? "")">\(rows)</tbody></table>
            """
        return DashboardPage(title: "Events", section: "/events", content: content)
    }
}
