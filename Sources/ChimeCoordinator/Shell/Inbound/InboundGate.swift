import ChimeCore
import ChimeRuntime
import ChimeWire
import ZeroMQ

/// What the loop keeps to read its peers' messages: the control socket's per-peer rate
/// limits, the route and key each worker announced itself with, the codec, and the per-peer log of
/// what they sent wrong.
struct InboundGate {
    /// Per-peer token buckets of the control socket (`control.rateLimit`).
    var rateLimiter: ControlRateLimiter
    /// Control requests read and waiting for their connection's turn (round-robin).
    var fairQueue: ControlFairQueue<BoundedMessage>
    /// Requests a turn reads and serves at most, adjusted to the time turns spend on them.
    var allowance = ServeAllowance(target: CoordinatorService.controlTurnTarget)
    /// This turn's serving so far: when it started and how many requests it served; `nil`
    /// until the turn serves, and again once ``allowance`` has been told.
    var serving: (started: ContinuousClock.Instant, served: Int)?
    /// Requests refused since start because their connection's (or every connection's)
    /// waiting requests passed `limits.controlPendingBytes…`.
    var pendingRefusals = 0
    /// The routing id and (with security) the key each worker last announced itself with on
    /// the dispatch socket: firings go to that routing id, and results count only from a
    /// connection with that key, whatever `worker` they claim.
    var workerRoutes = WorkerRoutes()
    /// Decodes requests and worker messages.
    let codec = WireCodec()
    /// Warnings a peer's messages cause, a few a second per peer at most.
    let peerLog: PeerLog
    /// The peer of the control request being handled (its ZAP user id, else its address), for `peerLog`.
    var currentPeer: String?
    /// The operation of the control request being handled and whether it changes something
    /// (`nil` until it decodes), for `recordRequest`.
    var decodedRequest: (operation: ControlOperation, isMutating: Bool)?
}
