/// A fixed table of read-only routes: `GET` (and `HEAD`) on an exact path runs its handler;
/// any other method gets 405 with `Allow: GET, HEAD`, any other path 404.
public struct HTTPRoutes: Sendable {
    private let routes: [String: @Sendable () -> HTTPResponse]

    /// Makes the table from paths (such as `/metrics`) and their handlers.
    public init(_ routes: [String: @Sendable () -> HTTPResponse]) {
        self.routes = routes
    }

    /// The answer to `request`: the route's, 404 or 405.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        guard let route = routes[request.path] else {
            return HTTPResponse(status: 404, text: "not found: try \(routes.keys.sorted().joined(separator: " "))\n")
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return HTTPResponse(status: 405, text: "method not allowed: only GET and HEAD\n", headers: ["Allow": "GET, HEAD"])
        }
        return route()
    }
}
