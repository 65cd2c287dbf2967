internal import CMicroHTTPD
import Foundation
import Synchronization

/// A small HTTP/1.1 server for machines (metrics and probes) on GNU libmicrohttpd: a thread
/// per connection (`MHD_USE_THREAD_PER_CONNECTION` with an internal `poll` thread
/// accepting), so a scrape that waits for the coordinator's next loop turn never holds up a
/// `/healthz` probe on another connection.
///
/// Odd requests are libmicrohttpd's to refuse before the handler sees them: a request line
/// or headers beyond 16 KiB (`MHD_OPTION_CONNECTION_MEMORY_LIMIT`, answered 414 or 431),
/// bytes that are not HTTP (400, or the connection is closed), idle connections after
/// 10 s.
/// Slow clients (slowloris) cannot starve the probes (``HTTPConnectionTracker``): a request's
/// headers must all arrive within 5 s of its start, however slowly they trickle, and past 64
/// open connections a new one closes the one that has waited longest for its request.
public final class HTTPServer: Sendable {
    /// The port the server listens on (the kernel's choice when the address said 0).
    public let port: UInt16
    /// The address it was asked to listen on.
    public let address: HTTPListenAddress
    private let daemon: Mutex<OpaquePointer?>
    private let handlerBox: Unmanaged<HandlerBox>
    private let tracker: HTTPConnectionTracker

    /// Starts listening at once; requests are served on libmicrohttpd's thread until `stop`.
    /// - Parameter handler: answers one request; it runs on libmicrohttpd's thread, never
    ///   on the caller's (hence `@Sendable` and nonisolated).
    /// - Throws: `HTTPServerError` `.cannotListen` when the address is in use or not on
    ///   this machine. The corresponding libmicrohttpd call is `MHD_start_daemon_va`.
    /// - Parameter maximumBodyBytes: the largest `POST` or `PUT` body read, in bytes; a larger one is
    ///   answered 413 without calling the handler. 0 (the default) reads no body: the
    ///   handler answers as soon as the headers are in.
    /// - Parameter tls: a PEM certificate and key to serve HTTPS with (libmicrohttpd's GnuTLS:
    ///   `MHD_USE_TLS`, `MHD_OPTION_HTTPS_MEM_CERT`, `MHD_OPTION_HTTPS_MEM_KEY`); `nil`
    ///   serves plain HTTP. Throws `.tlsUnavailable` when this libmicrohttpd has no TLS and
    ///   `.cannotListen` when GnuTLS refuses the certificate or key.
    public init(
        address: HTTPListenAddress, maximumBodyBytes: Int = 0, tls: HTTPTLSIdentity? = nil,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws(HTTPServerError) {
        if tls != nil, !Self.supportsTLS {
            throw HTTPServerError(.tlsUnavailable, "this libmicrohttpd was built without TLS (MHD_FEATURE_TLS): cannot serve HTTPS")
        }
        guard var socketAddress = address.socketAddress() else {
            throw HTTPServerError(.invalidAddress, "'\(address.host)' is not an IP address literal")
        }
        let tracker = HTTPConnectionTracker(limit: Self.connectionLimit, headerTimeout: .seconds(Self.headerTimeoutSeconds))
        let box = Unmanaged.passRetained(HandlerBox(handler, tracker: tracker, maximumBodyBytes: maximumBodyBytes))
        let notify: @convention(c) (
            UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?, MHD_ConnectionNotificationCode
        ) -> Void = connectionNotification
        var flags = UInt32(MHD_USE_POLL_INTERNAL_THREAD.rawValue) | UInt32(MHD_USE_THREAD_PER_CONNECTION.rawValue)
        if address.isIPv6 { flags |= UInt32(MHD_USE_IPv6.rawValue) }
        if tls != nil { flags |= UInt32(MHD_USE_TLS.rawValue) }
        // strdup'd so the pointers outlive the option list; libmicrohttpd copies them at start.
        let certificate = tls.flatMap { strdup($0.certificatePEM) }
        let key = tls.flatMap { strdup($0.keyPEM) }
        defer {
            free(certificate)
            if let key {
                memset(key, 0, strlen(key))
                free(key)
            }
        }
        let unescape: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?) -> Int =
            unescapeCallback
        // As addresses (Sendable), so the daemon pointer shares no region with the C strings.
        let certificateAddress = certificate.map { Int(bitPattern: $0) }
        let keyAddress = key.map { Int(bitPattern: $0) }
        let started: OpaquePointer? = socketAddress.withUnsafeMutableBytes { bytes in
            // The option list is read inside the call: the sockaddr need not outlive it.
            var options: [any CVarArg] = [
                Int32(bitPattern: MHD_OPTION.SOCK_ADDR.rawValue), OpaquePointer(bytes.baseAddress!),
                Int32(bitPattern: MHD_OPTION.CONNECTION_MEMORY_LIMIT.rawValue), Int(Self.connectionMemoryBytes),
                // Room above the limit the tracker keeps, so a probe is accepted and an older
                // waiting connection closed for it.
                Int32(bitPattern: MHD_OPTION.CONNECTION_LIMIT.rawValue), UInt32(Self.connectionLimit + Self.closingHeadroom),
                Int32(bitPattern: MHD_OPTION.CONNECTION_TIMEOUT.rawValue), UInt32(Self.connectionTimeoutSeconds),
                // A function pointer and its (unused, null) context pointer.
                Int32(bitPattern: MHD_OPTION.UNESCAPE_CALLBACK.rawValue), unsafeBitCast(unescape, to: OpaquePointer.self),
                Int(0),
                Int32(bitPattern: MHD_OPTION.NOTIFY_CONNECTION.rawValue), unsafeBitCast(notify, to: OpaquePointer.self),
                OpaquePointer(Unmanaged.passUnretained(tracker).toOpaque()),
            ]
            if let certificate = certificateAddress.flatMap(OpaquePointer.init(bitPattern:)),
                let key = keyAddress.flatMap(OpaquePointer.init(bitPattern:))
            {
                options += [
                    Int32(bitPattern: MHD_OPTION.HTTPS_MEM_CERT.rawValue), certificate,
                    Int32(bitPattern: MHD_OPTION.HTTPS_MEM_KEY.rawValue), key,
                ]
            }
            options.append(Int32(bitPattern: MHD_OPTION.END.rawValue))
            return withVaList(options) { arguments in
                MHD_start_daemon_va(flags, address.port, nil, nil, accessHandler, box.toOpaque(), arguments)
            }
        }
        guard let started else {
            box.release()
            if tls != nil {
                throw HTTPServerError(
                    .cannotListen, "cannot serve HTTPS on \(address) (in use, not an address of this machine, or GnuTLS refused the certificate or key)")
            }
            throw HTTPServerError(.cannotListen, "cannot listen for HTTP on \(address) (in use, or not an address of this machine)")
        }
        self.address = address
        self.handlerBox = box
        self.tracker = tracker
        tracker.startWatchdog()
        self.port = address.port != 0 ? address.port : chime_mhd_bound_port(started)
        self.daemon = Mutex(started)
    }

    /// Whether this libmicrohttpd serves HTTPS (`MHD_is_feature_supported(MHD_FEATURE_TLS)`;
    /// Debian's is built with GnuTLS).
    public static var supportsTLS: Bool { chime_mhd_supports_tls() != 0 }

    /// The most memory one connection may use, request line and headers included, in bytes.
    public static let connectionMemoryBytes = 16 * 1024
    /// The most connections open at once; a new one past it closes the one that has waited
    /// longest for its request.
    public static let connectionLimit = 64
    /// How long a request's line and headers may take to arrive in all, in seconds, from the
    /// connection's start or the previous response (not restarted by each byte).
    public static let headerTimeoutSeconds = 5
    /// How long an idle connection stays open, in seconds.
    public static let connectionTimeoutSeconds = 10
    /// Connections libmicrohttpd accepts beyond ``connectionLimit``: ones being closed to make
    /// room. No per-address limit: a probe often shares its address with other clients (the
    /// node's), and making room by age serves it whatever that address holds.
    public static let closingHeadroom = 16

    /// Stops listening, closes every connection and waits for libmicrohttpd's thread to end
    /// (a handler under way finishes first). Later calls do nothing. The corresponding
    /// libmicrohttpd call is `MHD_stop_daemon`.
    public func stop() {
        let stopped = daemon.withLock { daemon -> Bool in
            guard let running = daemon else { return false }
            MHD_stop_daemon(running)
            daemon = nil
            return true
        }
        if stopped {
            tracker.stop()
            handlerBox.release()
        }
    }

    deinit { stop() }
}

/// Carries the handler through libmicrohttpd's `void *` context.
private final class HandlerBox: Sendable {
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let tracker: HTTPConnectionTracker
    let maximumBodyBytes: Int
    init(_ handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse, tracker: HTTPConnectionTracker, maximumBodyBytes: Int) {
        self.handler = handler
        self.tracker = tracker
        self.maximumBodyBytes = maximumBodyBytes
    }
}

/// libmicrohttpd's unescape callback (`MHD_OPTION_UNESCAPE_CALLBACK`) for the path and the
/// query: ``PathUnescaping`` (`%00` kept, so no NUL cuts a path short), then the
/// 0-terminator after the decoded bytes. A file-level function, as `accessHandler`.
private func unescapeCallback(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?, text: UnsafeMutablePointer<CChar>?
) -> Int {
    guard let text else { return 0 }
    let length = PathUnescaping.decodeInPlace(UnsafeMutableRawBufferPointer(start: text, count: strlen(text)))
    text[length] = 0
    return length
}

/// libmicrohttpd's request callback: a file-level function, so it captures nothing and is
/// isolated to no actor (it runs on libmicrohttpd's thread, one per connection, so the calls
/// for one request come in turn).
///
/// Without a body limit a request is answered on the first call, before any body is read.
/// With one, a `POST` or `PUT` is answered on the last call (upload size 0 after the body): the body
/// chunks in between are kept by the tracker for the connection, past the limit only
/// counted (the answer is then 413).
private func accessHandler(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?, url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?, uploadData: UnsafePointer<CChar>?,
    uploadDataSize: UnsafeMutablePointer<Int>?, connectionContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let context, let connection else { return MHD_Result.NO }
    let box = Unmanaged<HandlerBox>.fromOpaque(context).takeUnretainedValue()
    let methodText = method.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) } ?? ""
    var body: [UInt8] = []
    if box.maximumBodyBytes > 0, methodText == "POST" || methodText == "PUT", let connectionContext, let uploadDataSize {
        if connectionContext.pointee == nil {
            // The first call: headers only. A non-null marker says the body follows.
            box.tracker.requestHeadersArrived(connection)
            connectionContext.pointee = UnsafeMutableRawPointer(bitPattern: 1)
            box.tracker.beginBody(connection)
            return MHD_Result.YES
        }
        if uploadDataSize.pointee > 0 {
            if let uploadData {
                box.tracker.appendBody(
                    connection, UnsafeRawBufferPointer(start: uploadData, count: uploadDataSize.pointee), limit: box.maximumBodyBytes)
            }
            uploadDataSize.pointee = 0
            return MHD_Result.YES
        }
        guard let complete = box.tracker.takeBody(connection) else {
            defer { box.tracker.requestAnswered(connection) }
            let refusal = HTTPResponse(status: 413, text: "request body too large: at most \(box.maximumBodyBytes) bytes\n")
            return queue(refusal, on: connection)
        }
        body = complete
    } else {
        box.tracker.requestHeadersArrived(connection)
    }
    defer { box.tracker.requestAnswered(connection) }
    // Bytes that are not UTF-8 become U+FFFD: no route matches them, which is a 404.
    let request = HTTPRequest(
        method: methodText,
        path: url.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) } ?? "",
        query: connectionValues(connection, kind: .GET_ARGUMENT_KIND, lowercasingNames: false),
        headers: connectionValues(connection, kind: .HEADER_KIND, lowercasingNames: true),
        body: body)
    return queue(box.handler(request), on: connection)
}

/// Queues `response` on `connection`. The corresponding libmicrohttpd call is `MHD_queue_response`.
private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
    let body = response.body
    let created = body.withUnsafeBytes { bytes in
        MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let created else { return MHD_Result.NO }
    defer { MHD_destroy_response(created) }
    _ = MHD_add_response_header(created, "Content-Type", response.contentType)
    for (name, value) in response.headers { _ = MHD_add_response_header(created, name, value) }
    let status = UInt32(clamping: max(100, min(599, response.status)))
    return MHD_queue_response(connection, status, created)
}

/// Collects name-value pairs of one kind while libmicrohttpd iterates over them.
private final class ValueCollector {
    var values: [String: String] = [:]
    let lowercasingNames: Bool
    init(lowercasingNames: Bool) { self.lowercasingNames = lowercasingNames }
}

/// The query arguments or headers of a request (the first of a repeated name). The
/// corresponding libmicrohttpd call is `MHD_get_connection_values`.
private func connectionValues(_ connection: OpaquePointer, kind: MHD_ValueKind, lowercasingNames: Bool) -> [String: String] {
    let collector = ValueCollector(lowercasingNames: lowercasingNames)
    let iterator: @convention(c) (UnsafeMutableRawPointer?, MHD_ValueKind, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> MHD_Result =
        collectValue
    withExtendedLifetime(collector) {
        _ = MHD_get_connection_values(connection, kind, iterator, Unmanaged.passUnretained(collector).toOpaque())
    }
    return collector.values
}

private func collectValue(
    context: UnsafeMutableRawPointer?, kind: MHD_ValueKind, key: UnsafePointer<CChar>?, value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let context, let key else { return MHD_Result.YES }
    let collector = Unmanaged<ValueCollector>.fromOpaque(context).takeUnretainedValue()
    var name = String(decoding: UnsafeRawBufferPointer(start: key, count: strlen(key)), as: UTF8.self)
    if collector.lowercasingNames { name = name.lowercased() }
    let text = value.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) } ?? ""
    if collector.values[name] == nil { collector.values[name] = text }
    return MHD_Result.YES
}
