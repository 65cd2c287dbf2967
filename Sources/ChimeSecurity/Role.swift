/// What a CURVE key may do, decided by the allow-list folder its certificate is in.
///
/// - `operator`: every control operation.
/// - `client`: the reminder and recipient operations (`schedule`, `list`, `cancel`, `enable`,
///   `disable`, `register`, `recipient`, `badge`, `ack`, `act`, `job`, `delivered`, `events`,
///   `ping`), optionally only for some recipients (``RecipientScope``), and the event stream
///   when unrestricted.
/// - `worker`: dispatch, results and events ingest; on control only `map` (to follow the
///   shard map).
/// - `subscriber`: the event stream and the control `events` catch-up.
public enum Role: String, CaseIterable, Sendable, Hashable {
    /// Every control operation and the event stream.
    case `operator`
    /// Reminder and recipient operations, optionally for some recipients only.
    case client
    /// Dispatch, results and events ingest: the firing path.
    case worker
    /// The event stream and the control `events` catch-up.
    case subscriber
}

/// One of the coordinator's sockets, named by its ZAP domain (`ZMQ_ZAP_DOMAIN`), so the ZAP
/// handler knows which socket a peer is connecting to.
public enum SocketDomain: String, CaseIterable, Sendable {
    /// The control ROUTER.
    case control = "chime.control"
    /// The dispatch ROUTER.
    case dispatch = "chime.dispatch"
    /// The results PULL.
    case results = "chime.results"
    /// The events XPUB (subscribers).
    case events = "chime.events"
    /// The events-ingest XSUB (workers publish).
    case eventsIngest = "chime.events-ingest"
    /// The start-up self-test socket, which no key may reach.
    case selfTest = "chime.self-test"
}
