import ChimeCore
import ChimeJournal
import ChimeWire

extension SlotWriteGate {
    /// The error a refused write is answered with, `nil` for `.accept`: `try_again` with
    /// `retryAfterMs` (at least 1 ms), or `wrong_shard` naming the owner and `mapEpoch`.
    public func refusal(of recipient: RecipientID, map: ShardMap, field: String) -> WireError? {
        switch self {
        case .accept:
            return nil
        case .tryAgain(let seconds):
            let milliseconds = max(1, Int(min(seconds, 3_600) * 1000))
            return WireError(
                .tryAgain, "recipient \(recipient.rawValue)'s slot \(map.slot(of: recipient)) is moving; retry in \(milliseconds) ms",
                field: field, retryAfterMilliseconds: milliseconds)
        case .wrongShard(let owner):
            var error = WireError(
                .wrongShard,
                "recipient \(recipient.rawValue) is on slot \(map.slot(of: recipient)), owned by \(owner.map { "shard \($0)" } ?? "no shard") (map epoch \(map.mapEpoch))",
                field: field)
            error.shard = owner
            error.mapEpoch = map.mapEpoch
            return error
        }
    }
}
