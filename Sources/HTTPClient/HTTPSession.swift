import Foundation
import Synchronization

/// An ``HTTPClient`` that keeps its connections open between requests: each request borrows
/// an idle libcurl handle (whose connection to the host, and TLS session, it reuses) or makes
/// one, and gives it back after. Several threads may send at once; each uses its own handle,
/// so the number of connections follows the callers' concurrency, and at most
/// `maximumIdleHandles` are kept between requests.
///
/// APNs asks providers to keep connections open rather than open one per notification
/// (Apple, "Sending notification requests to APNs", Best practices for managing connections).
///
/// ```swift
/// let session = HTTPSession(client: HTTPClient(timeout: 10, httpVersion: .http2))
/// let response = try session.send(request)  // a second send to the same host reuses the connection
/// ```
public final class HTTPSession: Sendable {
    /// The options every request is sent with.
    public let client: HTTPClient
    /// The most handles kept open while no request uses them.
    public let maximumIdleHandles: Int
    private let idle: Mutex<[EasyHandle]>

    /// A session sending with `client`'s options; nothing is opened until a request is sent.
    public init(client: HTTPClient, maximumIdleHandles: Int = 4) {
        self.client = client
        self.maximumIdleHandles = max(maximumIdleHandles, 0)
        idle = Mutex([])
    }

    deinit {
        idle.withLock { handles in
            for handle in handles { handle.close() }
            handles.removeAll()
        }
    }

    /// Sends `request` on a kept connection when one is idle, at most `client.timeout` seconds.
    /// - Returns: the response, whatever its status.
    /// - Throws: `HTTPClientError` as ``HTTPClient/send(_:)`` does.
    public func send(_ request: HTTPClient.Request) throws(HTTPClientError) -> HTTPClient.Response {
        try HTTPClient.checkURL(of: request)
        let borrowed = idle.withLock { $0.popLast() }
        let handle: EasyHandle
        if let borrowed { handle = borrowed } else { handle = try EasyHandle.make() }
        do {
            let response = try client.perform(request, on: handle)
            giveBack(handle)
            return response
        } catch {
            // A failed exchange may leave its connection half-used: closed, not kept.
            handle.close()
            throw error
        }
    }

    private func giveBack(_ handle: EasyHandle) {
        let isKept = idle.withLock { handles in
            guard handles.count < maximumIdleHandles else { return false }
            handles.append(handle)
            return true
        }
        if !isKept { handle.close() }
    }
}
