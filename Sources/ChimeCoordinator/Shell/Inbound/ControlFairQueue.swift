import ChimeCore
import Foundation

/// Control requests read off the socket and waiting to be served, queued per connection and
/// served round-robin (issue 37, item 2): one request of each connection that has any in
/// turn, so a connection that floods cannot put its requests ahead of another's (Nagle's
/// fair queuing, one request per round as the quantum).
///
/// Bounded in bytes: a connection may hold `maxBytesPerConnection` waiting, all of them
/// together `maxBytesTotal`; a request beyond is not queued (the shell refuses it
/// `rate_limited`). A connection with nothing waiting may queue one request of any size, and
/// any request may be queued when nothing waits, so no request is refused for its size alone.
///
/// Pure: no sockets, no clock; the shell reads into it and serves from it within its budget.
struct ControlFairQueue<Request> {
    /// The bytes one connection may have waiting, and all together.
    struct Limits: Equatable {
        var maxBytesPerConnection: Int
        var maxBytesTotal: Int
    }

    private var queues: [[Data]: (requests: RingQueue<(request: Request, bytes: Int)>, bytes: Int)] = [:]
    /// Connections with requests waiting, in serving order.
    private var turns = RingQueue<[Data]>()
    let limits: Limits
    /// The bytes of every request waiting (`chime_control_pending_bytes`).
    private(set) var pendingBytes = 0
    /// Requests waiting.
    private(set) var count = 0

    /// An empty queue with `limits`.
    init(limits: Limits) { self.limits = limits }

    /// Connections with requests waiting.
    var connectionCount: Int { turns.count }

    /// Whether no request waits.
    var isEmpty: Bool { count == 0 }

    /// The bytes `connection` has waiting.
    func pendingBytes(of connection: [Data]) -> Int { queues[connection]?.bytes ?? 0 }

    /// Queues `request` (`bytes` long) behind `connection`'s earlier ones.
    /// - Returns: `false`, queuing nothing, when the connection already has requests waiting
    ///   and this one would pass its bound, or when others wait and it would pass the total.
    mutating func enqueue(_ request: Request, bytes: Int, from connection: [Data]) -> Bool {
        let held = queues[connection]?.bytes
        let fitsConnection = held.map { $0 + bytes <= limits.maxBytesPerConnection } ?? true
        let fitsTotal = pendingBytes == 0 || pendingBytes + bytes <= limits.maxBytesTotal
        guard fitsConnection && fitsTotal else { return false }
        if held != nil {
            // In place: a copy out of the dictionary and back would copy the whole ring.
            queues[connection]?.requests.append((request, bytes))
            queues[connection]?.bytes += bytes
        } else {
            var requests = RingQueue<(request: Request, bytes: Int)>()
            requests.append((request, bytes))
            queues[connection] = (requests, bytes)
            turns.append(connection)
        }
        pendingBytes += bytes
        count += 1
        return true
    }

    /// The next request to serve: the oldest of the connection whose turn it is; that
    /// connection goes to the back of the line when it has more.
    mutating func next() -> (connection: [Data], request: Request)? {
        guard let connection = turns.popFirst(), let (request, bytes) = queues[connection]?.requests.popFirst() else { return nil }
        queues[connection]?.bytes -= bytes
        pendingBytes -= bytes
        count -= 1
        if queues[connection]?.requests.isEmpty ?? true {
            queues[connection] = nil
        } else {
            turns.append(connection)
        }
        return (connection, request)
    }
}
