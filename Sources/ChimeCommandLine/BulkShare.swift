/// The share of a bulk run's reminders settled (scheduled or failed), for its progress bar
/// and ETA (issue 42: the bar showed the share of the input's bytes read, which runs ahead of
/// what the coordinator has answered by the chunks in flight).
///
/// The total is estimated from what was read: `read` items in `readFraction` of the input
/// (exact once the input is read whole, or when the caller knows the total).
/// - Parameters:
///   - settled: reminders the coordinator answered for, scheduled or failed.
///   - read: items read from the input so far.
///   - readFraction: the share of the input read (0…1), `nil` when unknown (stdin).
/// - Returns: 0…1, or `nil` when the total cannot be estimated.
public func bulkSettledShare(settled: Int, read: Int, readFraction: Double?) -> Double? {
    guard let readFraction, readFraction.isFinite, readFraction > 0, read > 0 else { return nil }
    let estimatedTotal = Double(read) / min(1, readFraction)
    return min(1, max(0, Double(settled) / estimatedTotal))
}
