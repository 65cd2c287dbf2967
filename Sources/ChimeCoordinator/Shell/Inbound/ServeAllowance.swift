/// How many control requests one loop turn reads and serves (issue 37 item 2), adjusted
/// after every turn that served any: additive increase, multiplicative decrease, as TCP's
/// congestion window (RFC 5681 §3.1), on the time the turn spent on requests (serving them
/// and carrying out the turn's directives, replies included) against ``target``.
///
/// Why: a request's cost is mostly after it is served (its reply is encoded and sent with the
/// turn's other directives), and that cost depends on the request and on how much CPU the
/// loop gets. Under a flood of pings on 2 busy cores, 115 requests read in 1 ms took 1.5 ms to
/// serve and 4 to 12 ms to carry out, so another connection's ping waited up to a 14 ms turn.
/// Bounding what a turn takes in keeps turns near `target` whatever a request costs; what a
/// turn does not read waits in libzmq's queue for its connection (the ROUTER reads its
/// connections in turn, ZeroMQ Guide ch. 3 "fair-queuing"), and a connection that sends faster
/// than it is served meets its high-water mark.
///
/// The allowance binds only while requests are shared: within ``sharingMemorySeconds`` of a
/// turn that found two or more connections waiting. One connection alone waits behind nobody
/// but itself, so it keeps the old bounds (``maximum`` requests and the serve budget): a
/// pipelining client is not slowed by turns cut short for nobody.
///
/// Pure: the shell measures and reports; nothing here reads a clock.
struct ServeAllowance {
    /// Requests per turn at least, however long they take: what a request costs beyond this is the
    /// per-turn budgets' business (``CoordinatorService/controlTurnBudget``).
    static let minimum = 8
    /// Requests per turn at most.
    static let maximum = 1000
    /// Added after a turn that served its whole allowance within ``target``.
    static let step = 8

    /// The time a turn may spend on requests (serving and carrying out) before the allowance
    /// shrinks by a quarter.
    let target: Duration
    /// Requests the next turn reads and serves at most, within `minimum...maximum`.
    private(set) var requestsPerTurn: Int

    /// How long (seconds) requests count as shared after a turn found two or more connections
    /// waiting.
    static let sharingMemorySeconds = 1.0
    /// The monotonic reading (seconds) of the last turn that found two or more connections waiting.
    private var sharedAt = -Double.infinity

    /// An allowance of `initial` requests a turn (clamped to `minimum...maximum`).
    init(target: Duration, initial: Int = 64) {
        self.target = target
        requestsPerTurn = min(Self.maximum, max(Self.minimum, initial))
    }

    /// Notes how many connections have requests waiting as a turn starts serving; `now` is a
    /// monotonic reading in seconds.
    mutating func noteWaiting(connections: Int, at now: Double) {
        if connections >= 2 { sharedAt = now }
    }

    /// Requests a turn reads and serves at most at `now` (monotonic seconds): the allowance
    /// while requests are shared, else ``maximum``.
    func limit(at now: Double) -> Int {
        now - sharedAt < Self.sharingMemorySeconds ? requestsPerTurn : Self.maximum
    }

    /// Adjusts the allowance after a turn that served `served` requests and spent `spent`
    /// serving them and carrying out its directives. A turn that served none changes nothing:
    /// its length owes nothing to requests.
    mutating func onTurn(served: Int, spent: Duration) {
        guard served > 0 else { return }
        if spent > target {
            requestsPerTurn = max(Self.minimum, requestsPerTurn - requestsPerTurn / 4)
        } else if served >= requestsPerTurn {
            requestsPerTurn = min(Self.maximum, requestsPerTurn + Self.step)
        }
    }
}
