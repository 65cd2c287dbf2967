import ChimeCore
import Foundation

/// The instants fire lateness counts from for firings whose due instant had already passed
/// when their reminder was scheduled (a one-shot at a past time, an import with
/// `--include-past`): lateness is delivery − max(due, scheduled), so a reminder scheduled four
/// days late shows as delivered on time rather than four days late in `ctl stats`, the
/// dashboard and `chime_fire_lateness_seconds`.
///
/// Volatile like the other counters: a coordinator that restarts before such a firing is
/// delivered measures it from its due instant (it is then a misfire of its own outage).
/// Bounded by ``capacity``: past it, one origin (any) is forgotten and its firing counts from
/// its due instant.
struct LatenessOrigins: Sendable {
    /// Origins kept at most (40 bytes or so each).
    static let capacity = 100_000
    private var origins: [FiringID: Date] = [:]

    /// How many origins are kept.
    var count: Int { origins.count }

    /// Notes that the occurrence of `key` due at `dueAt` (UTC) was scheduled at `now`;
    /// nothing when it was still ahead.
    mutating func noteScheduled(_ key: ReminderKey, dueAt: Date, at now: Date) {
        guard dueAt < now else { return }
        let firingId = FiringID(key, dueAt: dueAt)
        if origins[firingId] == nil, origins.count >= Self.capacity, let any = origins.first?.key {
            origins[any] = nil
        }
        origins[firingId] = now
    }

    /// The instant the lateness of `firingId`, due at `dueAt`, counts from (kept: for the
    /// dispatch lateness of a firing not yet acknowledged).
    func origin(of firingId: FiringID, dueAt: Date) -> Date {
        // Nearly always empty: every dispatch and acknowledgement asks, so no hashing then.
        guard !origins.isEmpty else { return dueAt }
        return origins[firingId].map { max(dueAt, $0) } ?? dueAt
    }

    /// The instant the lateness of `firingId`, due at `dueAt`, counts from, forgetting it.
    mutating func takeOrigin(of firingId: FiringID, dueAt: Date) -> Date {
        guard !origins.isEmpty, let scheduledAt = origins.removeValue(forKey: firingId) else { return dueAt }
        return max(dueAt, scheduledAt)
    }

    /// Forgets the origin of a firing that will never be acknowledged (dead-lettered).
    mutating func forget(_ firingId: FiringID) {
        origins[firingId] = nil
    }
}
