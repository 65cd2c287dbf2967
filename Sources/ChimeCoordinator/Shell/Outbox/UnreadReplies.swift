import Foundation

/// The control connections that stopped reading their replies (issue 37, item 1).
///
/// The control ROUTER runs with `ZMQ_ROUTER_MANDATORY` and a send high-water mark of
/// `limits.controlQueueBytesPerConnection / limits.maxReplyBytes` messages, so a connection
/// that does not read holds at most that many replies of at most `maxReplyBytes` each (a
/// page; other replies are smaller) and a reply beyond it is refused at once (`EAGAIN`)
/// instead of being queued. Such a connection is *stalled*: its reply is dropped, and its
/// further requests are not served — each is dropped unread, or, once its pipe takes a
/// message again (it reads), answered `rate_limited` with its `requestId`, which resumes it.
/// The client then sends again what went unanswered (same `requestId`, applied once).
///
/// Pure bookkeeping, no sockets: the shell tries the send and reports what libzmq said.
struct UnreadReplies {
    /// What the shell does with a request from a connection.
    enum Admission: Equatable {
        /// Not stalled: decode and serve it.
        case serve
        /// Stalled: do not serve it; try to send it a `rate_limited` refusal, then report the
        /// outcome (``onRefusalSent(to:)``, ``onRequestDropped(from:at:)``).
        case refuse
        /// Stalled and tried within `probeIntervalSeconds`: drop it unread, at no cost
        /// (``onRequestDropped(from:at:)``). A flood costs the loop one read per request.
        case drop
    }

    /// Stalled connections (their reply routing) and when, in monotonic seconds, each was last
    /// found not reading (a refused reply or refusal).
    private(set) var stalled: [[Data]: Double] = [:]
    /// Replies dropped since start because their connection's queue was full
    /// (`chime_control_replies_dropped_total`).
    private(set) var repliesDropped = 0
    /// Requests of stalled connections not served since start, refused or dropped unread
    /// (`chime_control_requests_dropped_total`).
    private(set) var requestsDropped = 0
    /// The most connections tracked; past it the one found not reading longest ago is
    /// forgotten (it is found again at its next refused reply).
    let maxTracked: Int
    /// Seconds after which a connection not heard of is forgotten (a closed one never is
    /// otherwise: libzmq says nothing when a peer goes).
    let forgetAfterSeconds: Double
    /// Seconds between two refusals tried on one stalled connection: its requests in between
    /// are dropped without encoding one.
    let probeIntervalSeconds: Double

    /// An empty book.
    /// - Parameters:
    ///   - maxTracked: the most stalled connections kept (at least 1).
    ///   - forgetAfterSeconds: seconds after which an idle stalled connection is forgotten.
    ///   - probeIntervalSeconds: seconds between two refusals tried on one stalled connection.
    init(maxTracked: Int = 65_536, forgetAfterSeconds: Double = 60, probeIntervalSeconds: Double = 0.005) {
        self.maxTracked = max(1, maxTracked)
        self.forgetAfterSeconds = forgetAfterSeconds
        self.probeIntervalSeconds = probeIntervalSeconds
    }

    /// How many connections are stalled now (`chime_control_connections_not_reading`).
    var count: Int { stalled.count }

    /// Whether a request from `routing`, read at `now` (monotonic seconds), is served.
    func admission(of routing: [Data], at now: Double) -> Admission {
        guard !stalled.isEmpty, let since = stalled[routing] else { return .serve }
        return now - since >= probeIntervalSeconds ? .refuse : .drop
    }

    /// A reply to `routing` was refused because its queue is full (`EAGAIN`): it is dropped
    /// and the connection stalled.
    mutating func onReplyRefused(to routing: [Data], at now: Double) {
        repliesDropped += 1
        stall(routing, at: now)
    }

    /// A reply to `routing` was queued: a stalled connection that takes one reads again.
    mutating func onReplySent(to routing: [Data]) {
        if !stalled.isEmpty { stalled[routing] = nil }
    }

    /// The refusal of a stalled connection's request was queued: it reads again and is
    /// served from its next request on.
    mutating func onRefusalSent(to routing: [Data]) {
        requestsDropped += 1
        stalled[routing] = nil
    }

    /// The request of a stalled connection was dropped unread: its queue was still full at
    /// `now` (a refusal was refused), or it was not tried (`now` is `nil`).
    mutating func onRequestDropped(from routing: [Data], at now: Double?) {
        requestsDropped += 1
        if let now { stall(routing, at: now) }
    }

    /// The connection is gone (`EHOSTUNREACH`): nothing more to keep about it.
    mutating func onDisconnected(_ routing: [Data]) {
        stalled[routing] = nil
    }

    /// Forgets the connections not found stalled for `forgetAfterSeconds`.
    mutating func forgetIdle(at now: Double) {
        guard !stalled.isEmpty else { return }
        stalled = stalled.filter { now - $0.value < forgetAfterSeconds }
    }

    private mutating func stall(_ routing: [Data], at now: Double) {
        if stalled[routing] == nil, stalled.count >= maxTracked,
            let oldest = stalled.min(by: { $0.value < $1.value })?.key
        {
            stalled[oldest] = nil
        }
        stalled[routing] = now
    }
}
