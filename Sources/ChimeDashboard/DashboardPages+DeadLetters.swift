import ChimeCore
import ChimeWire
import Foundation

extension DashboardPages {
    /// One page of dead letters, oldest due first: each row with its cause ("no cause
    /// recorded" when the coordinator kept none) and, under it, every destination's outcome
    /// and attempt history; retry and delete buttons and "retry all".
    public static func deadLetters(_ page: Result<PageView<Firing>, WireError>, cursor: String?, context: FormContext) -> DashboardPage {
        var problems: [String] = []
        var content: HTML = .empty
        switch page {
        case .failure(let error):
            problems.append("\(error.code.rawValue): \(error.message)")
        case .success(let page):
            if let partial = page.partial { problems.append(partial) }
            let rows = page.items.map { firing -> HTML in
                let key = firing.firingId.description
                let failure = page.failures?[key]
                let recorded = failure?.cause ?? page.notes[key]
                let cause: HTML = recorded.map { text -> HTML in "\(text)" } ?? "<span class=\"muted\">no cause recorded</span>"
                return """
                    <tr data-firing="\(key)"><td class="firing">\(identifier(key))</td>\
                    <td>\(identifier(firing.recipient.rawValue, link: recipientLink(firing.recipient.rawValue)))</td>\
                    <td>\(instant(firing.dueAt))</td><td class="number">\(firing.attempt)</td><td>\(firing.content.title, or: "")</td>\
                    <td class="cause">\(cause)\(history(failure))</td>\
                    <td>\(ActionForm.button(.retry(firing.firingId), label: "Retry", context: context))\
                    \(ActionForm.button(.deleteDeadLetter(firing.firingId), label: "Delete", context: context, danger: true))</td></tr>
                    """
            }
            if rows.isEmpty {
                content = "<p id=\"empty\">No dead letters.</p>"
            } else {
                content = """
                    <p>\(ActionForm.button(.retryAll, label: "Retry all", context: context, danger: true))</p>
                    <table id="dead-letters"><thead><tr><th>Firing</th><th>Recipient</th><th>Due (UTC)</th>\
                    <th class="number">Attempts</th><th>Title</th><th>Cause and attempts</th><th></th></tr></thead><tbody>\(rows)</tbody></table>
                    """
            }
            if let next = page.nextCursor {
                content = "\(content)<p><a id=\"next\" href=\"/dead-letters?cursor=\(query: next)\">Next page</a></p>"
            }
        }
        if cursor != nil { content = "\(content)<p><a href=\"/dead-letters\">First page</a></p>" }
        return DashboardPage(title: "Dead letters", section: "/dead-letters", refreshSeconds: cursor == nil ? 10 : 0, problems: problems, content: content)
    }

    /// A dead letter's attempt history: the reporting worker, then per destination its
    /// outcome and reason and each attempt (time UTC, worker, number, HTTP status, error);
    /// empty without a failure record.
    static func history(_ failure: DeliveryFailure?) -> HTML {
        guard let failure else { return .empty }
        let destinations = failure.outcomes.map { outcome -> HTML in
            let attempts = outcome.attempts.map { attempt -> HTML in
                """
                <tr><td>\(instant(attempt.at))</td><td>\(identifier(attempt.worker.rawValue))</td><td class="number">\(attempt.number)</td>\
                <td class="number">\(attempt.status.map(String.init) ?? "-")</td><td>\(attempt.error ?? "-")</td></tr>
                """
            }
            let table: HTML = attempts.isEmpty
                ? "<p class=\"muted\">no attempts recorded</p>"
                : """
                    <table class="attempts"><thead><tr><th>At (UTC)</th><th>Worker</th><th class="number">#</th>\
                    <th class="number">Status</th><th>Error</th></tr></thead><tbody>\(attempts)</tbody></table>
                    """
            return """
                <li><span class="destination">\(identifier(outcome.destination))</span> \(outcome.channel): \
                <b>\(outcome.outcome.rawValue)</b>\(outcome.reason.map { reason -> HTML in " — \(reason)" } ?? .empty)\(table)</li>
                """
        }
        let count = failure.outcomes.reduce(0) { $0 + $1.attempts.count }
        return """
            <details class="attempt-history"><summary>\(count) attempt\(count == 1 ? "" : "s"), reported by worker \
            \(failure.worker.rawValue)</summary><ul>\(destinations)</ul></details>
            """
    }
}
