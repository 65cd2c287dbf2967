/// The code a shard answers while a slot it owns is handing over.
extension WireError.Code {
    /// The recipient's slot is moving and its writes pause for a moment: nothing was applied;
    /// retry after `retryAfterMs` milliseconds with the same `requestId`.
    public static let tryAgain = WireError.Code(rawValue: "try_again")
}
