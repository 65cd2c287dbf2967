import ChimeCore
import ChimeSecurity
import ChimeWire

extension CoordinatorState {
    /// Why placing `reminders` (as they will be placed, in request order) would take the
    /// caller's recipients past its key's quota, or `nil` when it would not (or the caller has
    /// none: no recipient restriction, or both limits unlimited).
    ///
    /// Counted against ``TenantUsage`` (derived from the entries; the first check of a scope
    /// counts it in one pass): a new id adds a reminder and its bytes, a replaced one the
    /// difference in bytes, an id repeated in the request counts once. A request is refused
    /// only when it would end over a limit *and* grow what that limit counts, so a tenant over
    /// its quota (a lowered quota, snoozes, which are never refused) may still replace and
    /// shrink. Costs one binary encoding per reminder, only for callers with a quota.
    /// - Returns: `quota_exceeded`, field `reminders`, naming the limit, the count and the scope.
    mutating func quotaRefusal(placing reminders: [Reminder], for client: ClientAddress) -> WireError? {
        guard let scope = client.scope else { return nil }
        let limits = (client.quota ?? TenantQuota()).resolved(
            defaultReminders: configuration.tenantMaxReminders, defaultBytes: configuration.tenantMaxReminderBytes)
        guard limits.reminders != nil || limits.bytes != nil else { return nil }
        let before = tenantUsage(of: scope)
        var after = before
        var placed: [ReminderKey: Int] = [:]
        for reminder in reminders {
            let bytes = reminder.binaryEncoded().count
            if let previous = placed[reminder.key] ?? entries[reminder.key]?.storedBytes {
                after.bytes += bytes - previous
            } else {
                after.reminders += 1
                after.bytes += bytes
            }
            placed[reminder.key] = bytes
        }
        let keys = TenantQuota.metadataKeys
        if let limit = limits.reminders, after.reminders > limit, after.reminders > before.reminders {
            return WireError(
                .quotaExceeded,
                "this key's recipients (\(scope.summary)) hold \(before.reminders) reminders; \(after.reminders) would pass the quota of \(limit) (\(keys.reminders), else limits.tenantMaxReminders); cancel some first",
                field: "reminders")
        }
        if let limit = limits.bytes, after.bytes > limit, after.bytes > before.bytes {
            return WireError(
                .quotaExceeded,
                "this key's recipients (\(scope.summary)) hold \(before.bytes) bytes of reminders; \(after.bytes) would pass the quota of \(limit) (\(keys.bytes), else limits.tenantMaxReminderBytes); cancel some first",
                field: "reminders")
        }
        return nil
    }
}
