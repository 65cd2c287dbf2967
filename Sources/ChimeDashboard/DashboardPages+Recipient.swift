import ChimeCore
import ChimeWire
import Foundation

extension DashboardPages {
    /// One recipient: zone, destinations masked as `chime recipient` masks them, attention
    /// settings (grants, quiet hours, summary times, throttle, opt-outs), then one page of its
    /// reminders with their attention fields and, for each held firing, "held until" its
    /// release instant (UTC) and why, as the coordinator recorded it (``HoldReason``).
    public static func recipient(_ result: Result<RecipientView, WireError>?, recipient: String, cursor: String?) -> DashboardPage {
        var problems: [String] = []
        var body: HTML = "<p class=\"muted\">Name a recipient to see its settings, destinations and reminders.</p>"
        switch result {
        case .none: break
        case .failure(let error): problems.append("\(error.code.rawValue): \(error.message)")
        case .success(let view):
            if let partial = view.reminders.partial { problems.append(partial) }
            if let error = view.registrationError { problems.append("The registration could not be read: \(error)") }
            body = """
                \(registration(view))
                <h2>Reminders</h2>\(recipientReminders(view))
                """
            if let next = view.reminders.nextCursor {
                body = "\(body)<p><a id=\"next\" href=\"\(recipientLink(recipient))&amp;cursor=\(query: next)\">Next page</a></p>"
            }
            if cursor != nil { body = "\(body)<p><a href=\"\(recipientLink(recipient))\">First page</a></p>" }
        }
        let content: HTML = """
            <form method="get" action="/recipients"><label>Recipient <input name="recipient" value="\(recipient)"></label> \
            <button type="submit">Show</button></form>\(body)
            """
        let title = recipient.isEmpty ? "Recipient" : "Recipient \(recipient)"
        return DashboardPage(title: title, section: "/recipients", problems: problems, content: content)
    }

    /// The registration as a definition list (`dl#registration`), or why there is none.
    static func registration(_ view: RecipientView) -> HTML {
        guard let result = view.registration else {
            guard view.registrationError == nil else { return .empty }
            return "<p id=\"registration\" class=\"muted\">Not registered: no zone, destinations or attention settings (chime register).</p>"
        }
        let recipient = result.recipient
        let allowed = recipient.settings.allowedNames
        let grants = recipient.grants.grantedNames
        let quiet = recipient.quietHours.map { window -> String in
            let days = window.weekdays.sorted { $0.rawValue < $1.rawValue }.map(\.code).joined(separator: ",")
            return "\(QuietWindow.text(ofMinutes: window.start))–\(QuietWindow.text(ofMinutes: window.end))\(days.isEmpty ? "" : " (\(days))")"
        }
        let throttle: String = recipient.throttle.map { throttle in
            "at most \(throttle.count) per \(SVGChart.label(throttle.seconds)) s\(throttle.per == .recipient ? "" : ", each \(throttle.per.rawValue) on its own")"
        } ?? "none"
        let destinations = (recipient.destinations ?? []).map { destination -> HTML in
            "<li class=\"destination\">\(identifier(destination.key)) <span class=\"muted\">\(destinationNote(destination))</span></li>"
        }
        func row(_ name: String, _ id: String, _ value: HTML) -> HTML { "<dt>\(name)</dt><dd id=\"\(id)\">\(value)</dd>" }
        func text(_ value: String) -> HTML { "\(value)" }
        let allowedThrough = recipient.breakThrough ?? QuietHoursBreakThrough()
        let breakThrough = (allowedThrough.categories.isEmpty ? [] : ["categories \(allowedThrough.categories.joined(separator: ", "))"])
            + (allowedThrough.filterCriteria.isEmpty ? [] : ["filter criteria \(allowedThrough.filterCriteria.joined(separator: ", "))"])
        let channelOptOuts = (recipient.optedOutChannels?.channels ?? [:]).sorted { $0.key < $1.key }.compactMap { key, set -> String? in
            let names = ChannelKind.allCases.filter(set.contains).map(\.rawValue)
            guard !names.isEmpty else { return nil }
            return "\(key == ChannelOptOuts.everyFiring ? "every firing" : key): \(names.joined(separator: ", "))"
        }
        let rows: [HTML] = [
            row("Zone", "zone", text(recipient.zone ?? "UTC (no zone registered)")),
            row("Locale", "locale", text(recipient.locale ?? "the development locale (none registered)")),
            row("Allows", "allows", text(allowed.isEmpty ? "nothing" : allowed.joined(separator: ", "))),
            row("Badge", "badge", "\(result.badge) (\(result.deliveredCount) delivered, unhandled)"),
            row("Token", "token", text(recipient.token == nil ? "none" : "configured (not shown)")),
            row("Max pending", "max-pending", text(recipient.maxPending.map(String.init) ?? "the configured default")),
            row("Destinations", "destinations", destinations.isEmpty ? "none" : "<ul>\(destinations)</ul>"),
            row("Grants", "grants", text(grants.isEmpty ? "none (time-sensitive and critical are delivered as active)" : grants.joined(separator: ", "))),
            row("Quiet hours", "quiet-hours", text(quiet.isEmpty ? "none" : "\(quiet.joined(separator: "; ")) in \(recipient.zone ?? "UTC")")),
            row("Breaks through", "break-through", text(
                (["time-sensitive and critical"] + breakThrough).joined(separator: "; "))),
            row("Summary at", "summary-at", text(recipient.summaryTimes.isEmpty ? "none" : recipient.summaryTimes.map(QuietWindow.text(ofMinutes:)).joined(separator: ", "))),
            row("Throttle", "throttle", text(throttle)),
            row("Opted out of", "opt-outs", text(recipient.optedOutCategories.isEmpty ? "nothing" : recipient.optedOutCategories.joined(separator: ", "))),
            row("Channels opted out", "channel-opt-outs", text(channelOptOuts.isEmpty ? "none" : channelOptOuts.joined(separator: "; "))),
            row("Categories", "categories", text(recipient.categories.isEmpty ? "none" : recipient.categories.map(\.identifier).joined(separator: ", "))),
        ]
        return "<dl class=\"settings\" id=\"registration\">\(rows)</dl>"
    }

    /// What `chime recipient` says after a destination's masked key.
    static func destinationNote(_ destination: Destination) -> String {
        switch destination {
        case .webhook(let webhook): "(\(webhook.secrets.count) secret\(webhook.secrets.count == 1 ? "" : "s"))"
        case .apns(let apns): "(topic \(apns.topic), \(apns.environment.rawValue))"
        case .fcm: ""
        }
    }

    /// The recipient's reminders with their attention fields and held firings.
    static func recipientReminders(_ view: RecipientView) -> HTML {
        let rows = view.reminders.items.map { listing -> HTML in
            let reminder = listing.reminder
            let content = reminder.content
            let held = (listing.held ?? []).map { held -> HTML in
                let why = view.holdReasons[held.firingId.description].map { " (\($0))" } ?? ""
                return "<li class=\"held\" title=\"\(held.firingId.description)\">held until \(instant(held.until))\(why)</li>"
            }
            return """
                <tr><td>\(identifier(reminder.id.rawValue, link: reminderLink(recipient: reminder.recipient.rawValue, id: reminder.id.rawValue)))</td>\
                <td class="state">\(listing.state.rawValue)</td><td>\(instant(listing.nextFireAt))</td>\
                <td>\(content.title, or: "")\(content.subtitle.map { subtitle -> HTML in "<br><span class=\"muted\">\(subtitle)</span>" } ?? .empty)</td>\
                <td class="level">\(content.interruptionLevel.rawValue)</td>\
                <td class="number">\(content.relevanceScore.map { SVGChart.label($0) } ?? "-")</td>\
                <td>\(content.category ?? "-")</td><td>\(content.unhandled.rawValue)</td><td>\(content.collapseKey ?? "-")</td>\
                <td>\(held.isEmpty ? "-" : "<ul class=\"holds\">\(held)</ul>" as HTML)</td></tr>
                """
        }
        guard !rows.isEmpty else { return "<p id=\"no-reminders\">No reminders.</p>" }
        return """
            <table id="recipient-reminders"><thead><tr><th>Id</th><th>State</th><th>Next fire (UTC)</th><th>Title</th>\
            <th>Interruption level</th><th class="number">Relevance</th><th>Category</th><th>Unhandled</th><th>Collapse key</th>\
            <th>Held firings</th></tr></thead><tbody>\(rows)</tbody></table>
            """
    }
}
