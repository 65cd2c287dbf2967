internal import CCurl
import Foundation

/// A blocking HTTP client for small exchanges with one server (the Kubernetes API server, a
/// push provider): one request per call, each with its own deadline, a response body bounded
/// before it is kept, and TLS verified against a CA bundle file of the caller's choosing.
///
/// Built on libcurl (Debian `libcurl4-openssl-dev`), loaded with `dlopen` at the first request
/// (a process that never sends one does not map it; one without `libcurl.so.4` gets `.failed`
/// saying so), rather than FoundationNetworking's
/// `URLSession`, whose Linux build always verifies against `/etc/ssl/certs/ca-certificates.crt`
/// and offers no way to trust a cluster's own CA (`ca.crt` of a service account). Safe to
/// use from several threads: each call makes and frees its own easy handle. A caller that
/// sends many requests to one host (APNs asks providers to keep their connections open)
/// uses an ``HTTPSession``, which keeps handles and their connections between requests.
///
/// ```swift
/// let client = HTTPClient(timeout: 5, certificateAuthorityFile: "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt")
/// let response = try client.send(HTTPClient.Request(method: "GET", url: "https://10.0.0.1/api"))
/// ```
public struct HTTPClient: Sendable {
    /// One request.
    public struct Request: Sendable {
        /// `GET`, `POST`, `PUT`, …
        public var method: String
        /// An `http://` or `https://` URL.
        public var url: String
        /// Header lines as name and value (no `Expect: 100-continue` is ever sent).
        public var headers: [(name: String, value: String)]
        /// The body sent, if any.
        public var body: Data?
        /// Addresses to connect to instead of resolving names, as libcurl's `CURLOPT_RESOLVE`
        /// entries `HOST:PORT:ADDRESS[,ADDRESS…]` (IPv6 in brackets): a caller that checked a
        /// name's addresses connects to exactly those (no second lookup to be answered
        /// differently). Empty: names are resolved as usual.
        public var pinnedAddresses: [String]

        /// A request from its parts.
        public init(
            method: String, url: String, headers: [(name: String, value: String)] = [], body: Data? = nil, pinnedAddresses: [String] = []
        ) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
            self.pinnedAddresses = pinnedAddresses
        }
    }

    /// A response: its status, headers and body.
    public struct Response: Sendable, Equatable {
        /// The HTTP status code (200, 404, 409, …).
        public var status: Int
        /// The body, at most the client's `maximumResponseBytes`.
        public var body: Data
        /// The final response's header fields, names lowercased (`retry-after`, `apns-id`); a
        /// field sent twice keeps its values joined by `, ` (RFC 9110 §5.3). At most 100
        /// fields of at most 8 KiB each are kept.
        public var headers: [String: String]
        /// The HTTP version the response came in: `1` (1.0 or 1.1), `2` or `3`; 0 when unknown.
        public var httpVersion: Int
        /// How many connections were opened for this exchange: 0 when an open one was reused.
        public var connectionsOpened: Int

        /// A response from its parts.
        public init(status: Int, body: Data, headers: [String: String] = [:], httpVersion: Int = 0, connectionsOpened: Int = 0) {
            self.status = status
            self.body = body
            self.headers = headers
            self.httpVersion = httpVersion
            self.connectionsOpened = connectionsOpened
        }

        /// The header field `name` (any case), or `nil`.
        public func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    /// Which HTTP version a client asks for.
    public enum HTTPVersion: Sendable, Hashable {
        /// libcurl's default (HTTP/2 over TLS when the server offers it, else HTTP/1.1).
        case automatic
        /// HTTP/1.1 only.
        case http1_1
        /// HTTP/2 over TLS, negotiated with ALPN, HTTP/1.1 when the server refuses it or for
        /// `http://` (libcurl's `CURL_HTTP_VERSION_2TLS`).
        case http2
        /// HTTP/2 without negotiation, also over cleartext `http://` (h2c "prior knowledge",
        /// RFC 9113 §3.3; libcurl's `CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE`).
        case http2PriorKnowledge
    }

    /// The whole exchange's deadline (connection, TLS, request and response), in seconds.
    public var timeout: Double
    /// The PEM file of the CA certificates a server's certificate must chain to; `nil`: the
    /// system's bundle.
    public var certificateAuthorityFile: String?
    /// The largest response body kept, in bytes; a larger one fails with `.tooLarge`.
    public var maximumResponseBytes: Int
    /// The HTTP version asked for.
    public var httpVersion: HTTPVersion

    /// A client (nothing is opened until a request is sent).
    public init(
        timeout: Double, certificateAuthorityFile: String? = nil, maximumResponseBytes: Int = 16 << 20, httpVersion: HTTPVersion = .automatic
    ) {
        self.timeout = timeout
        self.certificateAuthorityFile = certificateAuthorityFile
        self.maximumResponseBytes = maximumResponseBytes
        self.httpVersion = httpVersion
    }

    /// Sends `request` and waits for the whole response, at most `timeout` seconds.
    /// - Returns: the response, whatever its status.
    /// - Throws: `HTTPClientError` with `.timedOut`, `.tooLarge`, `.unreachable` (no connection),
    ///   `.tls` (the certificate did not verify, or the CA file did not load) or `.failed`.
    public func send(_ request: Request) throws(HTTPClientError) -> Response {
        try Self.checkURL(of: request)
        let handle = try EasyHandle.make()
        defer { handle.close() }
        return try perform(request, on: handle)
    }

    static func checkURL(of request: Request) throws(HTTPClientError) {
        guard request.url.hasPrefix("http://") || request.url.hasPrefix("https://") else {
            throw HTTPClientError(.failed, "\(request.url) is not an http:// or https:// URL")
        }
    }

    /// Sends `request` on `handle`, whose options are reset first (its connections kept).
    func perform(_ request: Request, on handle: EasyHandle) throws(HTTPClientError) -> Response {
        let easy = handle.pointer
        let table = handle.table
        chime_curl_easy_reset(table, easy)
        var headers: UnsafeMutablePointer<curl_slist>?
        var pins: UnsafeMutablePointer<curl_slist>?
        defer {
            chime_curl_slist_free_all(table, headers)
            chime_curl_slist_free_all(table, pins)
        }
        for entry in request.pinnedAddresses { pins = chime_curl_slist_append(table, pins, entry) }
        // An empty Expect: stops libcurl's 1-second wait for `100 Continue` before a large body.
        for line in request.headers.map({ "\($0.name): \($0.value)" }) + ["Expect:"] {
            headers = chime_curl_slist_append(table, headers, line)
        }
        let sink = ResponseSink(limit: maximumResponseBytes)
        var errorText = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let body = request.body ?? Data()
        let code: CURLcode = body.withUnsafeBytes { bodyBytes in
            errorText.withUnsafeMutableBufferPointer { errorBuffer in
                withExtendedLifetime(sink) {
                    var result = request.url.withCString { chime_curl_setopt_pointer(table, easy, CURLOPT_URL, $0) }
                    func set(_ option: CURLoption, _ value: Int) {
                        if result == CURLE_OK { result = chime_curl_setopt_long(table, easy, option, value) }
                    }
                    func set(_ option: CURLoption, pointer: UnsafeRawPointer?) {
                        if result == CURLE_OK { result = chime_curl_setopt_pointer(table, easy, option, pointer) }
                    }
                    // Timeouts without SIGALRM: the process has its own signal handling and threads.
                    set(CURLOPT_NOSIGNAL, 1)
                    set(CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
                    set(CURLOPT_CONNECTTIMEOUT_MS, timeoutMilliseconds)
                    set(CURLOPT_FOLLOWLOCATION, 0)
                    set(CURLOPT_ERRORBUFFER, pointer: errorBuffer.baseAddress)
                    set(CURLOPT_HTTPHEADER, pointer: headers)
                    if pins != nil { set(CURLOPT_RESOLVE, pointer: pins) }
                    switch httpVersion {
                    case .automatic: break
                    case .http1_1: set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
                    case .http2: set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
                    case .http2PriorKnowledge: set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
                    }
                    if let file = certificateAuthorityFile {
                        file.withCString { set(CURLOPT_CAINFO, pointer: $0) }
                    }
                    if result == CURLE_OK { result = chime_curl_setopt_offset(table, easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maximumResponseBytes)) }
                    request.method.withCString { set(CURLOPT_CUSTOMREQUEST, pointer: $0) }
                    if request.body != nil {
                        set(CURLOPT_POSTFIELDSIZE, bodyBytes.count)
                        set(CURLOPT_POSTFIELDS, pointer: bodyBytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1))
                    } else if request.method == "GET" {
                        set(CURLOPT_HTTPGET, 1)
                    }
                    if result == CURLE_OK { result = chime_curl_setopt_write_function(table, easy, responseSinkWrite) }
                    set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(sink).toOpaque())
                    if result == CURLE_OK { result = chime_curl_setopt_header_function(table, easy, responseSinkHeader) }
                    set(CURLOPT_HEADERDATA, pointer: Unmanaged.passUnretained(sink).toOpaque())
                    guard result == CURLE_OK else { return result }
                    return chime_curl_easy_perform(table, easy)
                }
            }
        }
        guard code == CURLE_OK else {
            let written = String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let detail = written.isEmpty ? String(cString: chime_curl_easy_strerror(table, code)) : written
            throw Self.failure(code, detail: detail, request: request, isOverLimit: sink.isOverLimit)
        }
        var status = 0
        _ = chime_curl_response_code(table, easy, &status)
        var version = 0
        _ = chime_curl_getinfo_long(table, easy, CURLINFO_HTTP_VERSION, &version)
        var connections = 0
        _ = chime_curl_getinfo_long(table, easy, CURLINFO_NUM_CONNECTS, &connections)
        return Response(status: status, body: sink.data, headers: sink.headers, httpVersion: Self.majorVersion(version), connectionsOpened: connections)
    }

    /// `timeout` in whole milliseconds for libcurl: at least 1, at most a day; a timeout that
    /// is not a finite number counts as a day (never a trapping conversion).
    var timeoutMilliseconds: Int {
        guard timeout.isFinite else { return 86_400_000 }
        return Int(min(max(timeout, 0.001), 86_400) * 1000)
    }

    private static func majorVersion(_ curlVersion: Int) -> Int {
        switch curlVersion {
        case CURL_HTTP_VERSION_1_0, CURL_HTTP_VERSION_1_1: 1
        case CURL_HTTP_VERSION_2_0: 2
        case CURL_HTTP_VERSION_3: 3
        default: 0
        }
    }

    private static func failure(_ code: CURLcode, detail: String, request: Request, isOverLimit: Bool) -> HTTPClientError {
        let what = "\(request.method) \(request.url)"
        if isOverLimit || code == CURLE_FILESIZE_EXCEEDED { return HTTPClientError(.tooLarge, "\(what): the response is over the bound (\(detail))") }
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return HTTPClientError(.timedOut, "\(what) timed out: \(detail)")
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return HTTPClientError(.unreachable, "\(what): \(detail)")
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            return HTTPClientError(.tls, "\(what): \(detail)")
        default: return HTTPClientError(.failed, "\(what): \(detail)")
        }
    }
}

/// One libcurl easy handle, which holds its connection cache between requests.
///
/// `@unchecked Sendable`: a handle is used by one thread at a time — ``HTTPClient/send(_:)``
/// owns its own for the call, and ``HTTPSession`` lends one handle to one caller at a time,
/// taking it out of its idle list under a lock.
struct EasyHandle: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    /// libcurl's function table, through which every call on this handle goes.
    let table: UnsafePointer<chime_curl_table>

    /// libcurl loaded (once per process, `curl_global_init` included), or why it could not be.
    /// A Swift global, not a C static: a `static inline` function's static is copied into each
    /// object file that inlines it, and a copy never loaded is called through garbage (as
    /// libcrypto's was in a release build). Never freed: it lives as long as the process.
    private nonisolated(unsafe) static let loaded: (table: UnsafePointer<chime_curl_table>?, error: String) = {
        let table = UnsafeMutablePointer<chime_curl_table>.allocate(capacity: 1)
        table.initialize(to: chime_curl_table())
        var error = [CChar](repeating: 0, count: 512)
        guard chime_curl_load_table(table, &error, error.count) == 1 else {
            table.deallocate()
            return (nil, String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return (UnsafePointer(table), "")
    }()

    /// A new handle, libcurl loaded first.
    /// - Throws: `HTTPClientError(.failed)` without libcurl or when it cannot make one.
    static func make() throws(HTTPClientError) -> EasyHandle {
        guard let table = loaded.table else { throw HTTPClientError(.failed, loaded.error) }
        guard let pointer = chime_curl_easy_init(table) else { throw HTTPClientError(.failed, "libcurl could not make a handle") }
        return EasyHandle(pointer: pointer, table: table)
    }

    /// Frees the handle and closes its connections.
    func close() { chime_curl_easy_cleanup(table, pointer) }
}

/// Collects a response body up to a bound (the write callback's context), and its headers.
private final class ResponseSink {
    let limit: Int
    var data = Data()
    var isOverLimit = false
    var headers: [String: String] = [:]

    init(limit: Int) { self.limit = limit }

    /// Takes one header line as libcurl hands it (`name: value\r\n`); a status line starts
    /// over (an interim `100` or a proxy's `200` comes before the final response's fields).
    func takeHeaderLine(_ line: String) {
        if line.hasPrefix("HTTP/") {
            headers = [:]
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { return }
        if let earlier = headers[name] {
            headers[name] = earlier + ", " + value
        } else if headers.count < 100 {
            headers[name] = value
        }
    }
}

/// libcurl's write callback: appends to the sink, or answers 0 (libcurl then fails with
/// `CURLE_WRITE_ERROR`) once the body would pass the bound.
private func responseSinkWrite(_ bytes: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let context else { return 0 }
    let sink = Unmanaged<ResponseSink>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    guard sink.data.count + length <= sink.limit else {
        sink.isOverLimit = true
        return 0
    }
    if let bytes, length > 0 { sink.data.append(UnsafeRawPointer(bytes).assumingMemoryBound(to: UInt8.self), count: length) }
    return length
}

/// libcurl's header callback: one whole header line a call; lines over 8 KiB are skipped.
private func responseSinkHeader(_ bytes: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let context else { return 0 }
    let sink = Unmanaged<ResponseSink>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    if let bytes, length > 0, length <= 8192 {
        sink.takeHeaderLine(String(decoding: UnsafeRawBufferPointer(start: bytes, count: length), as: UTF8.self))
    }
    return length
}
