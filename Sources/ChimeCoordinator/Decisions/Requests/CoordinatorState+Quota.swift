import ChimeCore
import ChimeSecurity
import ChimeWire

extension CoordinatorState {
    /// Why snoozing `firingId` would take the caller's recipients past its key's quota, or
    /// `nil` when it would not (or the caller has no quota, or the firing is unknown: `act`
    /// answers that). A snooze schedules a one-shot copy of the reminder when its job finishes
    /// (`<id>.snooze-<ms>`), so the copy and the copies of the scope's snoozes still running
    /// count as reminders the scope will hold: a key limited to 10 reminders snoozed one
    /// firing 300 times (issue 37 item 3). O(unfinished jobs), for restricted callers only.
    /// - Returns: `quota_exceeded`, field `action`.
    mutating func snoozeQuotaRefusal(of firingId: FiringID, for client: ClientAddress) -> WireError? {
        guard let scope = client.scope, let resolved = durable.resolve(firingId), let entry = entries[resolved.key] else { return nil }
        let original = entry.reminder
        func copy(_ suffix: String) -> Reminder {
            Reminder(id: ReminderID("\(original.id.rawValue).snooze-\(suffix)"), recipient: original.recipient, content: original.content,
                     trigger: original.trigger)
        }
        var placing = jobs.unfinished.filter { $0.snoozeSeconds != nil && scope.allows($0.recipient) }.map { job in
            entries[ReminderKey(job.reminderId, of: job.recipient)].map { pending in
                Reminder(id: ReminderID("\(pending.reminder.id.rawValue).snooze-\(job.jobId)"), recipient: job.recipient, content: pending.reminder.content,
                         trigger: pending.reminder.trigger)
            } ?? copy(job.jobId)
        }
        placing.append(copy("next"))
        guard var refusal = quotaRefusal(placing: placing, for: client) else { return nil }
        refusal.field = "action"
        refusal.message = "a snooze schedules a copy of the reminder: " + refusal.message
        return refusal
    }

    /// Why placing `reminders` (as they will be placed, in request order) would take the
    /// caller's recipients past its key's quota, or `nil` when it would not (or the caller has
    /// none: no recipient restriction, or both limits unlimited).
    ///
    /// Counted against ``TenantUsage`` (derived from the entries; the first check of a scope
    /// counts it in one pass): a new id adds a reminder and its bytes, a replaced one the
    /// difference in bytes, an id repeated in the request counts once. A request is refused
    /// only when it would end over a limit *and* grow what that limit counts, so a tenant over
    /// its quota (a lowered quota) may still replace and
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
