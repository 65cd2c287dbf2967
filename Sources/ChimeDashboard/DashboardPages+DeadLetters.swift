import ChimeCore
import ChimeWire
import Foundation

extension DashboardPages {
    /// One page of dead letters, oldest due first, with retry and delete buttons and "retry all".
    public static func deadLetters(_ page: Result<PageView<Firing>, WireError>, cursor: String?, context: FormContext) -> DashboardPage {
        var problems: [String] = []
        var content: HTML = .empty
        switch page {
        case .failure(let error):
            problems.append("\(error.code.rawValue): \(error.message)")
        case .success(let page):
            if let partial = page.partial { problems.append(partial) }
            let rows = page.items.map { firing -> HTML in
                """
                <tr><td class="firing">\(firing.firingId.description)</td><td>\(firing.recipient.rawValue)</td>\
                <td>\(instant(firing.dueAt))</td><td class="number">\(firing.attempt)</td><td>\(firing.content.title, or: "")</td>\
                <td class="cause">\(page.notes[firing.firingId.description], or: "")</td>\
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
                    <th class="number">Attempts</th><th>Title</th><th>Cause</th><th></th></tr></thead><tbody>\(rows)</tbody></table>
                    """
            }
            if let next = page.nextCursor {
                content = "\(content)<p><a id=\"next\" href=\"/dead-letters?cursor=\(query: next)\">Next page</a></p>"
            }
        }
        if cursor != nil { content = "\(content)<p><a href=\"/dead-letters\">First page</a></p>" }
        return DashboardPage(title: "Dead letters", section: "/dead-letters", refreshSeconds: cursor == nil ? 10 : 0, problems: problems, content: content)
    }
}
