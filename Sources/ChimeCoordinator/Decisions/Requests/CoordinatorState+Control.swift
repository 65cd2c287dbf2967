import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

extension CoordinatorState {
    /// Answers one control request.
    ///
    /// A request for a recipient of another shard's slot gets `wrong_shard` and nothing else
    /// (``ownershipRefusal(_:)``: not applied, not journaled, not remembered). A mutating
    /// request that carries a `requestId` already answered is not applied again: the
    /// remembered outcome is replied (idempotent retries).
    /// - Parameters:
    ///   - soundProblems: what is wrong with each named sound of a `schedule` request that
    ///     cannot be used (the shell checks them against its sounds directory, `SoundLibrary`):
    ///     a reminder naming one is scheduled with the default sound and a warning.
    ///   - now, monotonic: as for `onTick(now:monotonic:)`.
    /// - Returns: journal entries for what changed, then exactly one `.reply`.
    public mutating func onRequest(
        _ request: ControlRequest, from client: ClientAddress, at now: Date, monotonic: Double? = nil,
        soundProblems: [String: String] = [:]
    ) -> [CoordinatorDirective] {
        observeClocks(now, monotonic: monotonic)
        if let refusal = ownershipRefusal(request, at: now) { return [.reply(.failed(refusal), requestId: request.requestId, to: client)] }
        let isMutating = request.isMutating
        if isMutating, let requestId = request.requestId, let reply = requestLog.reply(to: client.requestLogKey(requestId)) {
            return [.replyEncoded(reply, to: client)]
        }
        var directives: [CoordinatorDirective] = []
        let outcome: ControlOutcome
        switch request.command {
        case .schedule(let reminders):
            outcome = schedule(reminders, for: client, soundProblems: soundProblems, at: now, directives: &directives)
        case .list(let filter, let all, let limit, let cursor, let order):
            outcome = list(filter, includeInactive: all, limit: limit, cursor: cursor, order: order, for: client, at: now)
        case .cancel(let filter):
            guard let finished = startCancel(filter, requestId: request.requestId, from: client, at: now, directives: &directives)
            else { return directives }
            outcome = finished
        case .status:
            outcome = .status(status(at: now))
        case .workers:
            outcome = .workers(workerReports(at: now))
        case .stats:
            var stats = StatsReport(
                dispatched: counters.dispatched, redelivered: counters.redelivered, acknowledged: counters.acknowledged,
                dispatchLateness: counters.dispatchLateness.summary(), fireLateness: counters.fireLateness.summary())
            stats.suppressed = counters.suppressed
            stats.deadLettered = counters.deadLettered
            let backlog = backlog(at: now)
            stats.dueBacklog = backlog.due
            stats.oldestUndeliveredAgeSeconds = backlog.oldestAgeSeconds
            if let rates = counters.throughput.rates(elapsed: clocks.elapsed, dispatched: counters.dispatched, acknowledged: counters.acknowledged) {
                stats.dispatchedPerSecond = rates.dispatchedPerSecond
                stats.acknowledgedPerSecond = rates.acknowledgedPerSecond
                stats.rateWindowSeconds = rates.windowSeconds
            }
            outcome = .stats(stats)
        case .ping:
            outcome = .pong(PongResult(now: now))
        case .map:
            outcome = configuration.shardMap.map { .map($0) }
                ?? .failed(WireError(.unavailable, "this coordinator was started without a shard map"))
        case .deadLetters(let limit, let cursor):
            outcome = deadLetterPage(limit: limit, cursor: cursor)
        case .retry(let firingId):
            outcome = retry(firingId, at: now, directives: &directives)
        case .deleteDeadLetter(let firingId):
            outcome = deleteDeadLetter(firingId, at: now, directives: &directives)
        case .events(let after, let recipient, let limit, let cursor):
            outcome = eventPage(after: after, recipient: recipient, limit: limit, cursor: cursor)
        case .register(let recipient):
            outcome = register(recipient, for: client, at: now, directives: &directives)
        case .recipient(let id):
            outcome = recipientResult(id).map { .recipient($0) }
                ?? .failed(WireError(.notFound, "recipient \(id) is not registered", field: "recipient"))
        case .badge(let recipient, let value):
            outcome = setBadge(recipient, to: value, at: now, directives: &directives)
        case .ack(let firingId):
            outcome = handle(firingId, action: nil, at: now, directives: &directives).map { .badge($0) }
                ?? .failed(WireError(.notFound, "no delivered firing \(firingId)", field: "firingId"))
        case .setEnabled(let ids, let enabled, let recipient):
            outcome = setEnabled(ids, of: recipient, enabled, for: client, at: now, directives: &directives)
            noteSwitch(ids, of: recipient, enabled: enabled, note: request.note, after: outcome, for: client, at: now, directives: &directives)
        case .delivered(let recipient, let remove, let limit, let cursor):
            outcome = delivered(recipient, remove: remove, limit: limit, cursor: cursor, at: now, directives: &directives)
        case .destinations(let recipient, let add, let remove):
            if let refusal = destinationQuotaRefusal(of: recipient, adding: add, removing: remove, for: client) {
                outcome = .failed(refusal)
            } else {
                outcome = changeDestinations(of: recipient, add: add, remove: remove, for: client, at: now, directives: &directives)
            }
        case .act(let firingId, let action, let text, let token, let snoozeSeconds):
            if action == "snooze", client.scope != nil, let refusal = snoozeQuotaRefusal(of: firingId, for: client) {
                outcome = .failed(refusal)
            } else {
                outcome = act(firingId, action: action, text: text, token: token, snoozeSeconds: snoozeSeconds, at: now,
                              directives: &directives)
            }
        case .job(let jobId):
            outcome = jobResult(jobId)
        case .move(let move):
            outcome = moveStep(move, at: now, directives: &directives)
        case .trigger(let command):
            outcome = trigger(command, at: now, directives: &directives)
        case .snapshot, .compact, .store:
            // Admission hands these to the service (`serveStoreRequest`): they need the store,
            // which the pure state does not see.
            outcome = .failed(WireError(.unavailable, "\(request.operation.rawValue) needs a file store"))
        }
        answer(
            outcome, requestId: request.requestId, isMutating: isMutating, about: request.routingRecipient, to: client, at: now,
            directives: &directives)
        return directives
    }

    /// Replies `outcome`; for a mutating request with a `requestId`, first records the reply's
    /// bytes as `.answered` (remembered for retries, with the one recipient the request was
    /// `about`, if any) when they fit one journal record.
    mutating func answer(
        _ outcome: ControlOutcome, requestId: String?, isMutating: Bool, about recipient: RecipientID?, to client: ClientAddress,
        at now: Date, directives: inout [CoordinatorDirective]
    ) {
        if isMutating, let requestId {
            let reply = outcome.encodedReply(requestId: requestId)
            guard rememberAnswer(reply, requestId: requestId, about: recipient, to: client, at: now, directives: &directives)
            else { return }
        }
        directives.append(.reply(outcome, requestId: requestId, to: client))
    }

    /// Replies with bytes already encoded (a mutating request's), remembered as `answer` does.
    mutating func answer(
        encoded reply: Data, requestId: String?, about recipient: RecipientID?, to client: ClientAddress, at now: Date,
        directives: inout [CoordinatorDirective]
    ) {
        if let requestId, !rememberAnswer(reply, requestId: requestId, about: recipient, to: client, at: now, directives: &directives) {
            return
        }
        directives.append(.replyEncoded(reply, to: client))
    }

    /// Records `reply` as `.answered` when it fits one journal record and is not remembered
    /// yet; otherwise appends the reply itself.
    /// - Returns: whether it was recorded (the caller then appends the reply).
    private mutating func rememberAnswer(
        _ reply: Data, requestId: String, about recipient: RecipientID?, to client: ClientAddress, at now: Date,
        directives: inout [CoordinatorDirective]
    ) -> Bool {
        let requestId = client.requestLogKey(requestId)
        guard Self.fitsOneRecord(answeredReplyBytes: reply.count, requestIdBytes: requestId.utf8.count) else {
            // Answered but not remembered: a journal record holds at most 16 MiB. A retry
            // with this id is applied again (replacing the same ids changes nothing).
            directives.append(.replyEncoded(reply, to: client))
            return false
        }
        guard requestLog.reply(to: requestId) == nil else {
            // A second client of the same walking cancel: answered once already.
            directives.append(.replyEncoded(reply, to: client))
            return false
        }
        // The service sends these same bytes (it finds them in the `answered` entry).
        record(.answered(requestId: requestId, reply: reply, at: now, recipient: recipient), into: &directives)
        return true
    }

    /// Whether an `answered` entry with a reply and request id of these sizes fits one journal
    /// record: kind, instant, three u32 lengths, the bytes and a recipient of at most 256 bytes
    /// (`CompactEntryEncoding`).
    static func fitsOneRecord(answeredReplyBytes replyBytes: Int, requestIdBytes: Int) -> Bool {
        1 + 8 + 4 + requestIdBytes + 4 + 256 + 4 + replyBytes <= RecordFraming.maximumPayloadLength
    }

    /// The bytes one id list entry may take at most: a `.cancelled` or `.switched` entry is
    /// JSON, where an id costs its quotes, a comma and at most two bytes per byte (escapes;
    /// ids have no control characters).
    static func jsonListCost(of id: ReminderKey) -> Int { 2 * id.storage.utf8.count + 8 }

    /// `ids` in consecutive runs whose JSON list takes at most half a journal record each,
    /// so one entry per run always fits (`cancel --all` on a million reminders).
    static func recordSizedRuns(of ids: [ReminderKey]) -> [ArraySlice<ReminderKey>] {
        let budget = RecordFraming.maximumPayloadLength / 2
        var runs: [ArraySlice<ReminderKey>] = []
        var start = ids.startIndex
        var bytes = 0
        for index in ids.indices {
            let cost = jsonListCost(of: ids[index])
            if bytes + cost > budget && index > start {
                runs.append(ids[start..<index])
                start = index
                bytes = 0
            }
            bytes += cost
        }
        if start < ids.endIndex { runs.append(ids[start...]) }
        return runs
    }

    /// Answers a message that could not be decoded into a request.
    public func onUndecodableRequest(_ error: WireError, requestId: String? = nil, from client: ClientAddress)
        -> [CoordinatorDirective]
    {
        [.reply(.failed(error), requestId: requestId, to: client)]
    }

    /// Schedules a batch atomically: every reminder is validated, and the whole batch checked
    /// against the caller's quota (``quotaRefusal(placing:for:)``), before any is applied. A
    /// reminder naming a sound in `soundProblems` gets the default sound and a warning.
    mutating func schedule(
        _ reminders: [Reminder], for client: ClientAddress, soundProblems: [String: String] = [:], at now: Date,
        directives: inout [CoordinatorDirective]
    ) -> ControlOutcome {
        if reminders.isEmpty {
            return .failed(WireError(.invalidArgument, "schedule needs at least one reminder", field: "reminders"))
        }
        if reminders.count > configuration.maxRemindersPerRequest {
            return .failed(WireError(
                .tooLarge,
                "at most \(configuration.maxRemindersPerRequest) reminders per request, not \(reminders.count) (coordinator.maxRemindersPerRequest)",
                field: "reminders"))
        }
        // The reminders as they will be placed, each with its occurrences and the warning its
        // sound earned: one array, filled in one pass (each copy of a reminder and its
        // recurrence is a few hundred bytes moved, and was a quarter of a bulk ingest's time).
        var placing: [(reminder: Reminder, recurrence: Recurrence, warning: String?)] = []
        placing.reserveCapacity(reminders.count)
        for index in reminders.indices {
            var reminder = reminders[index]
            if reminder.id.rawValue.isEmpty {
                counters.generatedIDs += 1
                reminder.id = generatedReminderID(at: now)
            }
            var recurrence: Recurrence
            do {
                try Self.checkFitsOneRecord(reminder, maximumUserInfoBytes: configuration.maximumUserInfoBytes)
                recurrence = try validate(reminder, maximumUserInfoBytes: configuration.maximumUserInfoBytes)
            } catch {
                var wire = WireError(error)
                let prefix = reminders.count == 1 ? "reminder" : "reminders[\(index)]"
                wire.field = wire.field.map { "\(prefix).\($0)" } ?? prefix
                return .failed(wire)
            }
            var warning: String?
            if configuration.truncateToMinute {
                reminder.trigger = reminder.trigger.truncatedToMinute()
                recurrence = (try? validate(reminder, maximumUserInfoBytes: Int.max)) ?? recurrence
            }
            if let sound = reminder.content.sound, sound != "default", let problem = soundProblems[sound] {
                reminder.content.sound = "default"
                warning = "\(reminder.id): sound \(sound) \(problem); scheduled with the default sound"
            }
            placing.append((reminder, recurrence, warning))
        }
        // Only a caller with a scope has a quota (`quotaRefusal` answers nil for the others).
        if client.scope != nil, let refusal = quotaRefusal(placing: placing.map(\.reminder), for: client) {
            return .failed(refusal)
        }
        var items: [ScheduleResult.Item] = []
        var warnings: [String] = []
        items.reserveCapacity(placing.count)
        for (reminder, recurrence, soundWarning) in placing {
            if let soundWarning { warnings.append(soundWarning) }
            let replaced = entries[reminder.key] != nil
            record(.scheduled(reminder, at: now), into: &directives, hints: ApplyHints(recurrence: recurrence))
            if let entry = entries[reminder.key], entry.state == .pending, let next = entry.next {
                counters.latenessOrigins.noteScheduled(reminder.key, dueAt: entry.fireInstant(of: next), at: now)
            }
            let (item, warning) = scheduleItem(of: reminder, replaced: replaced, at: now)
            items.append(item)
            if let warning { warnings.append(warning) }
        }
        return .scheduled(ScheduleResult(scheduled: items), warnings: warnings)
    }

    /// Refuses a reminder whose `scheduled` entry would not fit one journal record (16 MiB),
    /// before anything of its request is applied. Its binary form is measured only when its
    /// strings and `userInfo` limit come near that; ordinary reminders cost nothing here.
    /// - Throws: `ValidationError` `.tooLarge`.
    static func checkFitsOneRecord(_ reminder: Reminder, maximumUserInfoBytes: Int) throws(ValidationError) {
        let content = reminder.content
        var stringBytes = reminder.id.rawValue.utf8.count + reminder.recipient.rawValue.utf8.count
        for text in [content.title, content.body, content.action, content.launchImage, content.sound,
                     content.category, content.threadId, content.subtitle, content.targetContentIdentifier,
                     content.filterCriteria, content.collapseKey]
        {
            stringBytes += text?.utf8.count ?? 0
        }
        // The trigger (at most 1,000 dates and a rule) and the framing take well under 1 MiB.
        let margin = 1 << 20
        guard stringBytes.saturatingAdding(maximumUserInfoBytes).saturatingAdding(margin)
            > RecordFraming.maximumPayloadLength
        else { return }
        let bytes = reminder.binaryEncoded().count + 9
        guard bytes <= RecordFraming.maximumPayloadLength else {
            throw ValidationError(
                .tooLarge, "the reminder takes \(bytes) bytes; a journal record holds at most \(RecordFraming.maximumPayloadLength)")
        }
    }

    /// The reply item of a reminder just placed, with a warning when its only time is past
    /// or it has no occurrence left.
    func scheduleItem(of reminder: Reminder, replaced: Bool, at now: Date) -> (ScheduleResult.Item, warning: String?) {
        let entry = entries[reminder.key]
        let next = entry?.next
        let state = entry?.state ?? .finished
        var warning: String?
        if state == .finished {
            warning = "\(reminder.id): it has no occurrence left"
        } else if !reminder.trigger.isRepeating, let next {
            let fireAt = fireInstant(of: reminder, next)
            // A second of slack: `--in 0s` computed by a client a moment ago is not "in the past".
            if fireAt < now.addingTimeInterval(-1) {
                warning = "\(reminder.id): its time \(RFC3339.format(fireAt)) is in the past; it fires now"
            }
        }
        let item = ScheduleResult.Item(
            id: reminder.id, replaced: replaced, state: state, nextFireAt: next.map { fireInstant(of: reminder, $0) })
        return (item, warning)
    }

    mutating func retry(_ named: FiringID, at now: Date, directives: inout [CoordinatorDirective]) -> ControlOutcome {
        guard let firingId = durable.resolve(named), deadLetters[firingId] != nil else {
            return .failed(WireError(.notFound, "no dead-lettered firing \(named)", field: "firingId"))
        }
        if let made = record(.retried(firingId, at: now), into: &directives).made { dispatch.waiting.append(made) }
        return .retried(RetryResult(firingId: firingId))
    }

    /// Deletes dead letter `named` for good (journaled as `.deadLetterDeleted`).
    mutating func deleteDeadLetter(_ named: FiringID, at now: Date, directives: inout [CoordinatorDirective]) -> ControlOutcome {
        guard let firingId = durable.resolve(named), deadLetters[firingId] != nil else {
            return .failed(WireError(.notFound, "no dead-lettered firing \(named)", field: "firingId"))
        }
        record(.deadLetterDeleted(firingId, at: now), into: &directives)
        return .deadLetterDeleted(DeleteDeadLetterResult(firingId: firingId))
    }

    func status(at now: Date) -> StatusReport {
        let counts = Dictionary(uniqueKeysWithValues: reportedStateCounts(at: now).map { ($0.key.rawValue, $0.value) })
        var report = StatusReport(
            version: identity.version, pid: identity.pid, startedAt: identity.startedAt,
            uptimeSeconds: now.timeIntervalSince(identity.startedAt), reminders: counts, inFlight: dispatch.inFlight.count,
            workersAlive: dispatch.workers.values.filter { isAlive($0) }.count,
            nextFireAt: reportedNextFireAt(at: now))
        report.shard = configuration.shardID
        report.mapEpoch = configuration.shardMap?.mapEpoch
        // Only a file store can be full.
        if upkeep.isFileStore { report.storeFull = upkeep.isFull }
        if report.workersAlive == 0 {
            // Nothing fires until a worker comes: say so rather than show a quiet cluster.
            let backlog = backlog(at: now)
            if backlog.due > 0 {
                report.dueWithoutWorker = backlog.due
                report.oldestDueAgeSeconds = backlog.oldestAgeSeconds
            }
        }
        return report
    }

    func workerReports(at now: Date) -> WorkersResult {
        WorkersResult(workers: dispatch.workers.map { id, record in
            WorkerReport(
                id: id, host: record.host, pid: record.pid, alive: isAlive(record),
                lastSeenAt: record.lastSeenAt, acknowledged: record.acknowledged, delivered: record.delivered,
                capacity: record.capacity, leases: record.outstanding, quarantined: dispatch.leaseFailures.isQuarantined(id, at: clocks.elapsed))
        }.sorted { $0.id < $1.id })
    }
}

extension ControlOutcome {
    /// The reply to send for this outcome: a `ControlReply` JSON with `requestId` echoed
    /// (a bulk schedule's by hand, byte-identical to `WireCodec`).
    public func encodedReply(requestId: String?) -> Data {
        // A codec (two JSON coders) is made only for the rarer replies; a schedule reply,
        // the common answer to a mutating request, is written by hand.
        func reply<Result: Codable & Sendable>(_ result: Result) -> Data {
            WireCodec().encode(ControlReply(requestId: requestId, result: result))
        }
        switch self {
        case .scheduled(let result, let warnings):
            return ControlReply(requestId: requestId, result: result, warnings: warnings.isEmpty ? nil : warnings).fastJSON()
        case .listed(let page): return reply(page.result)
        case .cancelled(let result): return ControlReply(requestId: requestId, result: result).fastJSON()
        case .status(let result): return reply(result)
        case .workers(let result): return reply(result)
        case .stats(let result): return reply(result)
        case .pong(let result): return reply(result)
        case .map(let result): return reply(result)
        case .deadLetters(let result): return reply(result)
        case .retried(let result): return reply(result)
        case .deadLetterDeleted(let result): return reply(result)
        case .events(let result): return reply(result)
        case .recipient(let result): return reply(result)
        case .badge(let result): return reply(result)
        case .switched(let result): return reply(result)
        case .delivered(let result): return reply(result)
        case .job(let result): return reply(result)
        case .move(let result): return reply(result)
        case .trigger(let result): return result.encodedReply(requestId: requestId)
        case .failed(let error): return WireCodec().encode(ControlReply<EmptyResult>(requestId: requestId, error: error))
        }
    }
}
