/// Counters and sequence numbers the journal and snapshots carry: values read from the store
/// reach this arithmetic, so it saturates at the type's maximum instead of trapping.
extension FixedWidthInteger {
    /// `self + other`, or `.max` when that overflows.
    func saturatingAdding(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }

    /// Adds one, stopping at `.max`.
    mutating func saturatingIncrement() { self = saturatingAdding(1) }
}
