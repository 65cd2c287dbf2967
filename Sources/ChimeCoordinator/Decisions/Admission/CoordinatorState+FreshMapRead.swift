import ChimeWire
import Foundation

/// The fresh-map-read stage. A `move` step that reads the map record (`begin`, `follow`,
/// `release`) must see the register as it is now (a commit its mover just made): it is
/// answered `try_again` until a register read that started after it arrived has been taken
/// in (``onMapRead(record:freshReadsDone:)``). The mover's client resends the same request
/// (same `requestId`) after `retryAfterMs`, so it waits out one register read, however long
/// (a Kubernetes API server answers within its 5 s timeout), without the loop waiting at all:
/// the read runs on the service's reader thread (`.readMapRegister`).
extension CoordinatorState {
    /// How long a `move` step waiting for a fresh read is told to wait before it asks again
    /// the first time, in milliseconds: a file register reads in well under a millisecond, a
    /// ConfigMap in a few on a healthy API server. Each later `try_again` doubles it, up to
    /// ``freshMapReadMaximumRetryMilliseconds``: a client waits out 20 of them
    /// (`ControlClient.maximumRateLimitedWaits`), about 13 s in all, longer than two reads at
    /// the API server's 5 s timeout, so a slow read never outlasts the step's patience.
    public static let freshMapReadRetryMilliseconds = 5
    /// The longest `retryAfterMs` of a step waiting for a fresh read, in milliseconds.
    public static let freshMapReadMaximumRetryMilliseconds = 1_000
    /// How long a `move` step's fresh-read ticket is kept for its retries, in seconds.
    static let freshMapReadTicketLifetime = 60.0

    /// The `retryAfterMs` of a step refused `refusals` times before: 5, 10, 20, … 1,000 ms.
    public static func freshMapReadRetryMilliseconds(afterRefusals refusals: Int) -> Int {
        min(freshMapReadMaximumRetryMilliseconds, freshMapReadRetryMilliseconds << min(max(refusals, 0), 8))
    }

    /// The service follows the map register `name` (its reader thread runs): `move` steps
    /// that read the map record wait for a fresh read from now on.
    public mutating func onMapRegisterFollowed(name: String) {
        shardView.register = ShardView.RegisterFollowing(name: name)
    }

    /// The service stopped following the register: nothing waits for its reads any more.
    public mutating func onMapRegisterUnfollowed() { shardView.register = nil }

    /// What the register's reader handed over since the last call: the newest record it read
    /// (`nil`: none new) and how many fresh reads it has finished. The record is adopted
    /// (``adoptMapRecord(_:)``).
    /// - Returns: whether a record was adopted.
    @discardableResult
    public mutating func onMapRead(record: SlotMapRecord?, freshReadsDone: UInt64) -> Bool {
        shardView.register?.freshReadsDone = freshReadsDone
        guard let record else { return false }
        return adoptMapRecord(record)
    }

    /// For a `move` step: `nil` when it may be decided now (no register is followed, the step
    /// reads no map record, or a read that started after the step first arrived was taken
    /// in), else the `try_again` to answer, after `.readMapRegister` when the step just
    /// arrived. Steps are told apart by `requestId` (the client resends the same one), or by
    /// connection without one.
    mutating func awaitFreshMapRead(step: SlotMoveStep, requestId: String?, from client: ClientAddress) -> [CoordinatorDirective]? {
        guard var register = shardView.register, step.readsMapRecord else { return nil }
        defer { shardView.register = register }
        let key = requestId.map { client.requestLogKey($0) } ?? client.routing.map { $0.base64EncodedString() }.joined(separator: ".")
        var directives: [CoordinatorDirective] = []
        var refusals = 0
        if let waiting = register.waiting[key] {
            if register.freshReadsDone >= waiting.ticket {
                register.waiting[key] = nil
                return nil
            }
            refusals = waiting.refusals
            register.waiting[key]?.refusals += 1
        } else {
            let now = clocks.elapsed
            register.waiting = register.waiting.filter { now - $0.value.since < Self.freshMapReadTicketLifetime }
            register.freshReadsRequested += 1
            register.waiting[key] = ShardView.FreshRead(ticket: register.freshReadsRequested, since: now, refusals: 1)
            directives.append(.readMapRegister)
        }
        let milliseconds = Self.freshMapReadRetryMilliseconds(afterRefusals: refusals)
        let error = WireError(
            .tryAgain, "reading map register \(register.name) for this move step; retry in \(milliseconds) ms",
            retryAfterMilliseconds: milliseconds)
        directives.append(.reply(.failed(error), requestId: requestId, to: client))
        return directives
    }
}

extension SlotMoveStep {
    /// Whether `CoordinatorState.moveStep` decides this step on the map record
    /// (`begin` and `follow` pass it on to the source's or target's rules).
    var readsMapRecord: Bool {
        switch self {
        case .begin, .follow: true
        case .status, .pause, .export, .import: false
        }
    }
}
