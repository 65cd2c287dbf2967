/// One request as a handler sees it: the method, the path (without the query string), the
/// query arguments, the headers and, on a server that accepts bodies, the body.
public struct HTTPRequest: Hashable, Sendable {
    /// `GET`, `HEAD`, `POST`, … as the client sent it.
    public var method: String
    /// The request target's path, such as `/metrics`.
    public var path: String
    /// The query arguments, percent-decoded (`+` is a space); the first of a repeated name.
    public var query: [String: String]
    /// The request headers, names in lower case; the first of a repeated name.
    public var headers: [String: String]
    /// The body: empty unless the server was made with `maximumBodyBytes` above 0 and the
    /// method is `POST`.
    public var body: [UInt8]

    /// Creates the value from its fields.
    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }
}

/// What a handler answers.
public struct HTTPResponse: Hashable, Sendable {
    /// The status code, such as 200 or 503.
    public var status: Int
    /// The `Content-Type` header.
    public var contentType: String
    /// The body bytes (libmicrohttpd leaves them out for `HEAD`).
    public var body: [UInt8]
    /// More headers, such as `Allow` on a 405.
    public var headers: [String: String]

    /// Creates a response; `text` is sent as UTF-8.
    public init(status: Int, contentType: String = "text/plain; charset=utf-8", text: String, headers: [String: String] = [:]) {
        self.status = status
        self.contentType = contentType
        self.body = Array(text.utf8)
        self.headers = headers
    }
}
