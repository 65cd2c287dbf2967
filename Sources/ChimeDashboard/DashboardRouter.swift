import ChimeCore
import ChimeWire
import Foundation
import HTTPServer

/// Answers every dashboard request: pages (`GET`), the JSON API (`GET /api/…`), the
/// embedded assets, and changes (`POST /actions`, CSRF-checked, refused when read-only).
/// Runs on the HTTP server's threads, several at once.
public struct DashboardRouter: Sendable {
    /// Where the figures come from and changes go.
    public let source: any DashboardSource
    /// The charts' samples.
    public let history: MetricsHistory
    /// The live events.
    public let tail: EventTail
    /// The CSRF token and its checks.
    public let csrf: CSRFGuard
    /// Whether changes are refused (and no buttons drawn).
    public let readOnly: Bool
    /// The latest overview (pages and the sampler share it).
    public let overviews: OverviewCache
    /// The login every page and API call needs; `nil` serves without one (loopback only).
    public let login: DashboardLogin?
    /// The `Host` names served; others are answered 421 (DNS rebinding).
    public let hosts: DashboardHosts

    /// The largest request body read, in bytes (a form post is far smaller).
    public static let maximumBodyBytes = 16 * 1024

    /// Headers on every answer: a strict Content-Security-Policy (only this origin's script
    /// and stylesheet, no inline script or style, no framing, forms post here only).
    public static let securityHeaders: [String: String] = [
        "Content-Security-Policy":
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "same-origin",
        "Cache-Control": "no-store",
    ]

    /// Creates the router from its parts.
    /// - Parameter overviewAge: how old an overview pages show, in seconds (the sampling
    ///   interval: the sampler refreshes it that often).
    public init(
        source: any DashboardSource, history: MetricsHistory, tail: EventTail, csrf: CSRFGuard, readOnly: Bool,
        overviewAge: TimeInterval = 0, login: DashboardLogin? = nil, hosts: DashboardHosts = .any
    ) {
        self.login = login
        self.hosts = hosts
        self.overviews = OverviewCache(maximumAge: overviewAge)
        self.source = source
        self.history = history
        self.tail = tail
        self.csrf = csrf
        self.readOnly = readOnly
    }

    var context: FormContext { FormContext(csrfToken: csrf.token, readOnly: readOnly) }

    /// The answer to `request`.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        var response: HTTPResponse
        if !hosts.accepts(request.headers["host"]) {
            response = text(421, "misdirected request: this dashboard does not answer as \(request.headers["host"] ?? "(no Host)") (chime dashboard --allow-host NAME)\n")
        } else if request.method == "POST", let refusal = Self.crossSiteRefusal(request) {
            response = text(403, "forbidden: \(refusal)\n")
        } else if let login, let answer = gate(request, login: login) {
            response = answer
        } else if request.method == "POST" {
            response = request.path == "/actions" ? act(request) : text(405, "method not allowed: only /actions takes POST\n")
        } else if request.method == "GET" || request.method == "HEAD" {
            response = get(request)
        } else {
            response = text(405, "method not allowed: GET, HEAD, or POST to /actions\n")
            response.headers["Allow"] = "GET, HEAD, POST"
        }
        for (name, value) in Self.securityHeaders where response.headers[name] == nil { response.headers[name] = value }
        return response
    }

    /// Why a `POST` (any: an action, the login, the logout) is refused as sent by another
    /// site: `Sec-Fetch-Site` other than `same-origin`/`none`, or an `Origin` whose host is not
    /// the request's `Host`; `nil` lets it through (the CSRF token is checked after, for actions).
    static func crossSiteRefusal(_ request: HTTPRequest) -> String? {
        if let site = request.headers["sec-fetch-site"], !["same-origin", "none"].contains(site) {
            return "a post must come from this dashboard's own pages (Sec-Fetch-Site: \(site))"
        }
        if let origin = request.headers["origin"] {
            guard let originHost = DashboardHosts.originHostName(origin),
                let host = request.headers["host"].flatMap(DashboardHosts.hostName), originHost == host
            else { return "a post must come from this dashboard's own pages (Origin \(origin))" }
        }
        return nil
    }

    private func get(_ request: HTTPRequest) -> HTTPResponse {
        let query = request.query
        switch request.path {
        case "/": return page(DashboardPages.overview(overviews.overview(from: source), history: history))
        case "/workers": return page(DashboardPages.workers(source.workers()))
        case "/reminders":
            let search = ReminderSearch(recipient: query["recipient"], id: query["id"], cursor: query["cursor"])
            let result = Result { () throws(WireError) in try source.reminders(search) }
            return page(DashboardPages.reminders(search, page: result), status: status(of: result))
        case "/reminders/detail": return detail(query)
        case "/recipients":
            let recipient = query["recipient"] ?? ""
            let cursor = query["cursor"].flatMap { $0.isEmpty ? nil : $0 }
            guard !recipient.isEmpty else { return page(DashboardPages.recipient(nil, recipient: "", cursor: nil)) }
            let result = recipientView(recipient, cursor: cursor)
            return page(DashboardPages.recipient(result, recipient: recipient, cursor: cursor), status: status(of: result))
        case "/dead-letters":
            let cursor = query["cursor"].flatMap { $0.isEmpty ? nil : $0 }
            let result = Result { () throws(WireError) in try source.deadLetters(cursor: cursor) }
            return page(DashboardPages.deadLetters(result, cursor: cursor, context: context), status: status(of: result))
        case "/events":
            let recipient = query["recipient"].flatMap { $0.isEmpty ? nil : $0 }
            return page(DashboardPages.events(tail.events(after: 0, recipient: recipient), recipient: recipient, lastNumber: tail.lastNumber))
        case "/assets/dashboard.css": return HTTPResponse(status: 200, contentType: "text/css; charset=utf-8", text: DashboardAssets.css)
        case "/assets/dashboard.js":
            return HTTPResponse(status: 200, contentType: "text/javascript; charset=utf-8", text: DashboardAssets.javaScript)
        case "/healthz": return text(200, "ok\n")
        default:
            if request.path.hasPrefix("/api/") { return api(request.path, query) }
            return page(DashboardPage(title: "Not found", section: "", problems: ["No page \(request.path)."], content: "<p><a href=\"/\">Overview</a></p>"), status: 404)
        }
    }

    private func detail(_ query: [String: String]) -> HTTPResponse {
        let recipient = query["recipient"] ?? ""
        let id = query["id"] ?? ""
        guard !recipient.isEmpty, !id.isEmpty else {
            return page(DashboardPages.reminderDetail(nil, recipient: recipient, id: id, history: [], context: context,
                error: WireError(.invalidArgument, "give recipient and id")), status: 400)
        }
        let events = tail.events(after: 0, recipient: recipient).filter { $0.kind == "fire" && $0.json.contains("\"reminderId\":\"") && Self.mentions($0.json, id) }
        do throws(WireError) {
            let page = try source.reminders(ReminderSearch(recipient: recipient, id: id))
            let listing = page.items.first { $0.reminder.id.rawValue == id && $0.reminder.recipient.rawValue == recipient }
            return self.page(DashboardPages.reminderDetail(listing, recipient: recipient, id: id, history: events, context: context),
                status: listing == nil ? 404 : 200)
        } catch {
            return self.page(DashboardPages.reminderDetail(nil, recipient: recipient, id: id, history: [], context: context, error: error),
                status: Self.status(of: error))
        }
    }

    /// `recipient`'s registration and one page of its reminders; a registration that cannot
    /// be read (its shard down) still shows the reminders the other calls found.
    func recipientView(_ recipient: String, cursor: String?) -> Result<RecipientView, WireError> {
        Result { () throws(WireError) in
            let reminders = try source.reminders(ReminderSearch(recipient: recipient, cursor: cursor))
            do throws(WireError) {
                let registration = try source.recipient(RecipientID(recipient))
                return RecipientView(recipient: recipient, registration: registration, reminders: reminders)
            } catch {
                return RecipientView(
                    recipient: recipient, registration: nil, registrationError: "\(error.code.rawValue): \(error.message)", reminders: reminders)
            }
        }
    }

    /// Whether a fire event's JSON names reminder `id` (its `reminderId` field, JSON-escaped).
    static func mentions(_ json: String, _ id: String) -> Bool {
        let encoded = String(decoding: (try? JSONEncoder().encode(id)) ?? Data(), as: UTF8.self)
        return json.contains("\"reminderId\":\(encoded)")
    }

    private func act(_ request: HTTPRequest) -> HTTPResponse {
        guard !readOnly else { return text(403, "read-only: this dashboard was started with --read-only\n") }
        let fields = FormDecoding.fields(request.body)
        if let refusal = csrf.refusal(of: request, fields: fields) { return text(403, "forbidden: \(refusal)\n") }
        let action: DashboardAction
        switch ActionForm.action(from: fields) {
        case .success(let parsed): action = parsed
        case .failure(let error): return page(DashboardPages.actionResult(error.message, failed: true, back: "/"), status: 400)
        }
        let back = Self.back(after: action)
        guard fields["confirm"] == "yes" else { return page(DashboardPages.confirmation(action, context: context, back: back)) }
        do throws(WireError) {
            let sentence = try source.perform(action)
            return page(DashboardPages.actionResult(sentence, failed: false, back: back))
        } catch {
            return page(DashboardPages.actionResult("\(error.code.rawValue): \(error.message)", failed: true, back: back), status: Self.status(of: error))
        }
    }

    /// The page to go back to after `action`.
    static func back(after action: DashboardAction) -> String {
        switch action {
        case .setEnabled(let id, let recipient, _), .cancel(let id, let recipient):
            "/reminders/detail?recipient=\(HTML.queryEncode(recipient.rawValue))&id=\(HTML.queryEncode(id.rawValue))"
        case .retry, .retryAll, .deleteDeadLetter: "/dead-letters"
        }
    }

    private func api(_ path: String, _ query: [String: String]) -> HTTPResponse {
        let codec = WireCodec()
        switch path {
        case "/api/overview": return json(codec.encode(overviews.overview(from: source)))
        case "/api/workers": return json(codec.encode(source.workers()))
        case "/api/history":
            return json(codec.encode(history.all().map { ["shard": AnyCodableShard.shard($0.key), "samples": .samples($0.value)] }))
        case "/api/events":
            let after = query["after"].flatMap { UInt64($0) } ?? 0
            let recipient = query["recipient"].flatMap { $0.isEmpty ? nil : $0 }
            return json(codec.encode(["events": tail.events(after: after, recipient: recipient)]))
        case "/api/reminders":
            let search = ReminderSearch(recipient: query["recipient"], id: query["id"], cursor: query["cursor"])
            do throws(WireError) { return json(codec.encode(try source.reminders(search))) } catch { return jsonError(error) }
        case "/api/recipient":
            let recipient = query["recipient"] ?? ""
            guard !recipient.isEmpty else { return jsonError(WireError(.invalidArgument, "give recipient", field: "recipient")) }
            switch recipientView(recipient, cursor: query["cursor"].flatMap { $0.isEmpty ? nil : $0 }) {
            case .success(let view): return json(codec.encode(view))
            case .failure(let error): return jsonError(error)
            }
        case "/api/dead-letters":
            do throws(WireError) { return json(codec.encode(try source.deadLetters(cursor: query["cursor"].flatMap { $0.isEmpty ? nil : $0 }))) }
            catch { return jsonError(error) }
        default:
            return text(404, "not found: try /api/overview /api/workers /api/reminders /api/recipient /api/dead-letters /api/events /api/history\n")
        }
    }

    func page(_ page: DashboardPage, status: Int = 200) -> HTTPResponse {
        HTTPResponse(
            status: status, contentType: "text/html; charset=utf-8", text: page.render(readOnly: readOnly, logout: login != nil).text)
    }

    private func json(_ data: Data, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", text: String(decoding: data, as: UTF8.self) + "\n")
    }

    private func jsonError(_ error: WireError) -> HTTPResponse {
        json(WireCodec().encode(["error": error]), status: Self.status(of: error))
    }

    func text(_ status: Int, _ message: String) -> HTTPResponse { HTTPResponse(status: status, text: message) }

    private func status<Value>(of result: Result<Value, WireError>) -> Int {
        if case .failure(let error) = result { return Self.status(of: error) }
        return 200
    }

    /// The HTTP status for a cluster error: 400 for a bad argument, 404 not found, 503 otherwise.
    static func status(of error: WireError) -> Int {
        switch error.code {
        case .invalidArgument: 400
        case .notFound: 404
        case .forbidden, .unauthenticated: 403
        default: 503
        }
    }
}

/// One entry of `/api/history`: a shard id or its samples.
enum AnyCodableShard: Encodable {
    case shard(Int)
    case samples([HistorySample])

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .shard(let id): try container.encode(id)
        case .samples(let samples): try container.encode(samples)
        }
    }
}
