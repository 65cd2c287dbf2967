import Foundation

/// What to do with occurrences that came due while no coordinator was running (a misfire,
/// in Quartz's terms).
///
/// JSON: `"fireOnce"` (default), `"skip"`, `"fireAll"`.
public enum MisfirePolicy: String, Codable, Hashable, Sendable, CaseIterable {
    /// Fire one late firing per reminder (marked `late: true`, with the first missed
    /// occurrence's `dueAt`), then continue on the reminder's own schedule.
    case fireOnce
    /// Fire nothing late; continue with the first occurrence after the restart.
    case skip
    /// Fire every missed occurrence (up to the configured cap), then continue.
    case fireAll
}
