import Foundation

/// The frame every page shares: head with the embedded assets, the navigation, banners for
/// a partial answer or an error, then the page's `main`.
public struct DashboardPage: Sendable {
    /// The navigation entries: path and label.
    static let sections: [(path: String, label: String)] = [
        ("/", "Overview"), ("/workers", "Workers"), ("/reminders", "Reminders"), ("/recipients", "Recipients"),
        ("/dead-letters", "Dead letters"),
        ("/events", "Events"),
    ]

    /// The page title (after "Chime —").
    public var title: String
    /// The navigation entry to mark current.
    public var section: String
    /// Seconds between automatic refreshes of `main` (0: none, as on forms).
    public var refreshSeconds: Int
    /// Red banners: shards that did not answer, errors.
    public var problems: [String]
    /// A green banner: what an action did.
    public var notice: String?
    /// The page's content.
    public var content: HTML

    /// Creates the value from its fields.
    public init(title: String, section: String, refreshSeconds: Int = 0, problems: [String] = [], notice: String? = nil, content: HTML) {
        self.title = title
        self.section = section
        self.refreshSeconds = refreshSeconds
        self.problems = problems
        self.notice = notice
        self.content = content
    }

    /// The whole document; `logout` adds a log-out button (the dashboard has a login).
    public func render(readOnly: Bool, logout: Bool = false) -> HTML {
        let links = Self.sections.map { entry -> HTML in
            entry.path == section
                ? "<a class=\"current\" href=\"\(entry.path)\">\(entry.label)</a>"
                : "<a href=\"\(entry.path)\">\(entry.label)</a>"
        }
        let banners = problems.map { problem -> HTML in "<p class=\"banner partial\">\(problem)</p>" }
        let noticeBanner: HTML = notice.map { "<p class=\"banner notice\">\($0)</p>" } ?? .empty
        let mode: HTML = readOnly ? "<span class=\"muted\">read-only</span>" : .empty
        let leave: HTML =
            logout ? "<form class=\"inline\" method=\"post\" action=\"/logout\"><button type=\"submit\">Log out</button></form>" : .empty
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Chime — \(title)</title><link rel="stylesheet" href="/assets/dashboard.css">
            <script src="/assets/dashboard.js" defer></script></head>
            <body data-refresh="\(refreshSeconds)"><header><strong>Chime</strong><nav>\(links)</nav>\(mode)\(leave)</header>
            <main>\(banners)\(noticeBanner)<h1>\(title)</h1>\(content)</main>
            <footer>Rendered \(ISO8601DateFormatter().string(from: Date())) · <a href="/api/overview">JSON API</a></footer>
            </body></html>

            """
    }
}
