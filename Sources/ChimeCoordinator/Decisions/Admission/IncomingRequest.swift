import ChimeSecurity
import ChimeWire

/// A control request as the shell decoded it, with what the admission stages need to know
/// of where it came from (``CoordinatorState/onControlRequest(_:at:monotonic:)``).
public struct IncomingRequest: Sendable {
    /// The request.
    public var request: ControlRequest
    /// Where the reply goes, with the caller's tenant (its key); the authorization stage adds
    /// the key's recipient scope and quota.
    public var client: ClientAddress
    /// The request body's size, in bytes.
    public var bodyBytes: Int
    /// `nil` when security is off (every peer may use every operation); else the
    /// authenticated peer, or `.some(nil)` for a connection without a ZAP user id, which may
    /// use none.
    public var peer: Principal??
    /// The peer's key in the allow-lists in force now (`nil`: it is no longer there).
    public var grant: AccessPolicy.Grant?
    /// What is wrong with each named sound of a `schedule` that cannot be used (the shell
    /// checks them against its sounds directory).
    public var soundProblems: [String: String]

    /// Creates the value from its fields (see each property for meaning and units).
    public init(
        request: ControlRequest, client: ClientAddress, bodyBytes: Int, peer: Principal?? = nil, grant: AccessPolicy.Grant? = nil,
        soundProblems: [String: String] = [:]
    ) {
        self.request = request
        self.client = client
        self.bodyBytes = bodyBytes
        self.peer = peer
        self.grant = grant
        self.soundProblems = soundProblems
    }
}

/// The admission stages, in the order a request meets them.
public enum AdmissionStage: String, Sendable, Hashable {
    /// A request whose journal entry would hold its whole body must fit half a record.
    case recordSize
    /// A registration's categories are bounded.
    case categories
    /// The peer's role and recipient scope allow the request.
    case authorization
}
