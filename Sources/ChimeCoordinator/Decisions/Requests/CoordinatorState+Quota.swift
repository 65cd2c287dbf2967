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
        let limits = shardLimits(for: client, scope: scope)
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
                "this key's recipients (\(scope.summary)) hold \(before.reminders) reminders\(onThisShard); \(after.reminders) would pass \(describe(limit, of: limits.whole.reminders)) (\(keys.reminders), else limits.tenantMaxReminders); cancel some first",
                field: "reminders")
        }
        if let limit = limits.bytes, after.bytes > limit, after.bytes > before.bytes {
            return WireError(
                .quotaExceeded,
                "this key's recipients (\(scope.summary)) hold \(before.bytes) bytes of reminders, registrations and delivered lists\(onThisShard); \(after.bytes) would pass \(describe(limit, of: limits.whole.bytes)) (\(keys.bytes), else limits.tenantMaxReminderBytes); cancel some or remove delivered ones first",
                field: "reminders")
        }
        return nil
    }

    /// The caller's limits as this shard enforces them: its key's quota (else the configured
    /// defaults), each cut to this shard's allotment (``QuotaAllotment``), with the whole
    /// limits beside; `nil` for no limit.
    func shardLimits(for client: ClientAddress, scope: RecipientScope) -> (reminders: Int?, bytes: Int?, whole: (reminders: Int?, bytes: Int?)) {
        let whole = (client.quota ?? TenantQuota()).resolved(
            defaultReminders: configuration.tenantMaxReminders, defaultBytes: configuration.tenantMaxReminderBytes)
        let ownership = shardView.ownership
        func allotted(_ limit: Int?) -> Int? { limit.map { QuotaAllotment.allotment(of: $0, for: scope, under: ownership) } }
        return (allotted(whole.reminders), allotted(whole.bytes), whole)
    }

    /// " on this shard" when the cluster has several shards, else nothing.
    private var onThisShard: String { shardView.ownership.ownsEverySlot ? "" : " on shard \(configuration.shardID)" }

    /// "the quota of N", or, with several shards, "this shard's allotment of A of the quota of N".
    private func describe(_ limit: Int, of whole: Int?) -> String {
        guard let whole, whole != limit || !shardView.ownership.ownsEverySlot else { return "the quota of \(limit)" }
        return "this shard's allotment of \(limit) of the quota of \(whole) (a quota is split among the shards)"
    }

    /// Why storing a registration of `id` of `sizes.bytes` (in place of its registration, if any,
    /// of `sizes.previous`; ``Recipient/storedBytes``, 0 for none) would take the caller's
    /// recipients past its key's byte quota, or `nil` when it would not (or the caller has no
    /// byte quota: no recipient restriction, or `max-reminder-bytes` unlimited).
    ///
    /// A registration counts its JSON's bytes (``Recipient/storedBytes``) in the
    /// budget the scope's reminders count theirs in (``tenantUsage(of:)``): 20 recipients with
    /// 1,000 categories each once stored 84 MB under a 4,000-byte quota (issue 37 item 3).
    /// Refused only when the scope would end over its limit *and* the registration grows, so
    /// a smaller or same-size one always passes (a tenant over a lowered quota may shrink).
    /// The caller measures the sizes once for this and ``registrationSizeRefusal(of:sizes:field:)``.
    /// - Parameter field: the request field the refusal names (`recipient` for `register`,
    ///   `add` for `destinations`).
    /// - Returns: `quota_exceeded` naming the limit, the sizes and the scope.
    mutating func registrationQuotaRefusal(
        of id: RecipientID, sizes: (bytes: Int, previous: Int), for client: ClientAddress?, field: String
    ) -> WireError? {
        guard let client, let scope = client.scope, scope.allows(id) else { return nil }
        let limits = shardLimits(for: client, scope: scope)
        guard let limit = limits.bytes else { return nil }
        let (bytes, previousBytes) = sizes
        guard bytes > previousBytes else { return nil }
        let before = tenantUsage(of: scope).bytes
        let (after, overflow) = before.addingReportingOverflow(bytes - previousBytes)
        guard overflow || after > limit else { return nil }
        return WireError(
            .quotaExceeded,
            "this key's recipients (\(scope.summary)) hold \(before) bytes of reminders, registrations and delivered lists\(onThisShard); registering \(id) in \(bytes) bytes (\(previousBytes) now) would make \(after), past \(describe(limit, of: limits.whole.bytes)) (\(TenantQuota.metadataKeys.bytes), else limits.tenantMaxReminderBytes); register less, cancel some reminders or remove delivered ones first",
            field: field)
    }

    /// Why storing a registration of `id` of `sizes.bytes` (its current one: `sizes.previous`)
    /// would pass `limits.maxRegistrationBytes`, or `nil` when it fits
    /// or is no larger than the registration it replaces (one held from before the limit, or
    /// under a higher one, may stay as large or shrink). It bounds the `register` and
    /// `recipient` replies, which carry the registration (issue 37).
    /// - Parameter field: the request field the refusal names.
    /// - Returns: `too_large` naming the limit and the size.
    func registrationSizeRefusal(of id: RecipientID, sizes: (bytes: Int, previous: Int), field: String) -> WireError? {
        let (bytes, previousBytes) = sizes
        guard bytes > configuration.maxRegistrationBytes else { return nil }
        // One held from before the limit (or a lower one) may stay as large, or shrink.
        guard bytes > previousBytes else { return nil }
        return WireError(
            .tooLarge,
            "recipient \(id) would be stored in \(bytes) bytes, past the limit of \(configuration.maxRegistrationBytes) for one registration (limits.maxRegistrationBytes); use fewer or shorter categories, actions or destinations",
            field: field)
    }
}
