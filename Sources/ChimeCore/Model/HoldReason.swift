/// Why a firing is held instead of delivered (issue 40), as the coordinator decided it when
/// the occurrence came due and journaled it with the hold (`AttentionEntry.held`). On the wire
/// and in the dashboard as its raw value: `"quiet hours"`, `"summary"`,
/// `"quiet hours, then summary"`, `"throttle"`.
public enum HoldReason: String, Codable, Hashable, Sendable, CaseIterable {
    /// Due in a quiet window of the recipient's quiet hours; released at its end.
    case quietHours = "quiet hours"
    /// Waiting for the recipient's next scheduled summary.
    case summary = "summary"
    /// Due in a quiet window, then waiting for the summary after it ends.
    case quietHoursThenSummary = "quiet hours, then summary"
    /// Over the recipient's throttle; released at the slot it gives (the last rule applied,
    /// so a throttle slot after a quiet window or summary names the throttle).
    case throttle = "throttle"
}
