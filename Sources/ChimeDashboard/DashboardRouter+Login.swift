import Foundation
import HTTPServer

extension DashboardRouter {
    /// Paths served without login: the probe and the stylesheet and script the login page uses.
    static let openPaths: Set<String> = ["/healthz", "/assets/dashboard.css", "/assets/dashboard.js"]

    /// The answer for a request the login decides (the login and logout pages, or a refusal
    /// of one not logged in), or `nil` to route it as usual.
    func gate(_ request: HTTPRequest, login: DashboardLogin) -> HTTPResponse? {
        switch (request.method, request.path) {
        case ("GET", "/login"), ("HEAD", "/login"):
            if login.authorizes(request) { return redirect(to: "/") }
            return page(DashboardPages.login(problem: nil))
        case ("POST", "/login"): return logIn(request, login: login)
        case ("POST", "/logout"):
            if let id = DashboardLogin.session(in: request) { login.endSession(id) }
            var answer = redirect(to: "/login")
            answer.headers["Set-Cookie"] = login.clearingCookie
            return answer
        default: break
        }
        if Self.openPaths.contains(request.path) || login.authorizes(request) { return nil }
        if request.path.hasPrefix("/api/") || request.headers["authorization"] != nil || request.method != "GET" {
            var refusal = text(401, "unauthorized: log in at /login or send Authorization: Bearer TOKEN\n")
            refusal.headers["WWW-Authenticate"] = "Bearer realm=\"chime dashboard\""
            return refusal
        }
        return redirect(to: "/login")
    }

    private func logIn(_ request: HTTPRequest, login: DashboardLogin) -> HTTPResponse {
        let contentType = request.headers["content-type"]?.lowercased() ?? ""
        guard contentType.hasPrefix("application/x-www-form-urlencoded") else {
            return text(400, "log in with the form at /login (application/x-www-form-urlencoded)\n")
        }
        if let site = request.headers["sec-fetch-site"], !["same-origin", "none"].contains(site) {
            return text(403, "forbidden: a login must come from this dashboard's own login page (Sec-Fetch-Site: \(site))\n")
        }
        let fields = FormDecoding.fields(request.body)
        guard let token = fields["token"], login.accepts(token: token) else {
            return page(DashboardPages.login(problem: "Wrong token."), status: 401)
        }
        var answer = redirect(to: "/")
        answer.headers["Set-Cookie"] = login.cookie(for: login.startSession())
        return answer
    }

    private func redirect(to path: String) -> HTTPResponse {
        HTTPResponse(status: 303, text: "see \(path)\n", headers: ["Location": path])
    }
}

extension DashboardPages {
    /// The login form: the token, posted to `/login`.
    public static func login(problem: String?) -> DashboardPage {
        let content: HTML = """
            <form method="post" action="/login"><label>Token <input type="password" name="token" \
            autocomplete="current-password" autofocus></label> <button type="submit">Log in</button></form>
            """
        return DashboardPage(title: "Log in", section: "", problems: problem.map { [$0] } ?? [], content: content)
    }
}
