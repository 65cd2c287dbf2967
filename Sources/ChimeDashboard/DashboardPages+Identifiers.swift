import Foundation

extension DashboardPages {
    /// An id that fits its column: the stylesheet's `.id` cuts it at about 14em with an
    /// ellipsis, its `title` shows the whole id on hover, and the element's text is still
    /// the whole id, so selecting and copying it copies all of it. With `link`, the id is a
    /// link there (`link` is a path with its query already percent-encoded).
    static func identifier(_ text: String, link: String? = nil) -> HTML {
        guard let link else { return "<span class=\"id\" title=\"\(text)\">\(text)</span>" }
        return "<a class=\"id\" href=\"\(link)\" title=\"\(text)\">\(text)</a>"
    }

    /// The recipient page's path for `recipient`.
    static func recipientLink(_ recipient: String) -> String {
        "/recipients?recipient=\(HTML.queryEncode(recipient))"
    }

    /// A reminder's detail page path.
    static func reminderLink(recipient: String, id: String) -> String {
        "/reminders/detail?recipient=\(HTML.queryEncode(recipient))&id=\(HTML.queryEncode(id))"
    }
}
