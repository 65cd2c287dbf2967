import ChimeCore
import ChimeStore
import ChimeWire
import Foundation

/// The coordinator's durable state as a snapshot payload.
///
/// Two payload formats, told apart by their first byte:
/// - `{`: format 1, all JSON: `{"formatVersion": 1, "reminders": [{"reminder", "nextIndex",
///   "nextFireAt", "state", "deliveredCount", "lastFiredAt"}], "unsettled": [Firing],
///   "deadLetters": [Firing], "nextEventSeq": 42, "events": [FireEvent], …}`. Still read.
/// - `0x02`: format 2, written since: the byte 2, a u32 little-endian byte count, that many
///   bytes of the format-1 JSON with `"reminders": []` and `"formatVersion": 2`, then the
///   reminders in binary (see ``encodedPayload()``), so a million reminders load without
///   decoding a single one.
///
/// `unsettled` holds every firing made but not acknowledged (waiting, in flight or
/// recovered); recovery redelivers them with the same firing id.
public struct CoordinatorSnapshot: Codable, Sendable {
    /// One reminder with its schedule position.
    ///
    /// JSON shape (format 1): `{"reminder": {…}, "nextIndex", "nextFireAt", "state",
    /// "deliveredCount", "lastFiredAt"}`; in memory and in format 2 the reminder is held as
    /// `Reminder.binaryEncoded()` bytes.
    public struct ReminderRecord: Codable, Sendable {
        /// The reminder as scheduled, as `Reminder.binaryEncoded()` bytes.
        public var reminderBytes: [UInt8]
        /// The reminder's id.
        public var id: ReminderID
        /// The next occurrence's index in its `Recurrence`.
        public var nextIndex: Int?
        /// The next occurrence (UTC): the event instant.
        public var nextFireAt: Date?
        /// When the next occurrence fires (UTC): `nextFireAt` moved by the trigger's offset.
        /// `nil` in format 1, where it is computed from the reminder.
        public var armedAt: Date?
        /// Where the reminder is in its life.
        public var state: ReminderState
        /// How many occurrences were delivered.
        public var deliveredCount: Int
        /// When the last one was delivered (UTC).
        public var lastFiredAt: Date?

        /// Makes a record; `reminderBytes` must be `Reminder.binaryEncoded()` of a reminder
        /// with this `id`.
        public init(
            reminderBytes: [UInt8], id: ReminderID, nextIndex: Int?, nextFireAt: Date?, armedAt: Date?,
            state: ReminderState, deliveredCount: Int, lastFiredAt: Date?
        ) {
            self.reminderBytes = reminderBytes
            self.id = id
            self.nextIndex = nextIndex
            self.nextFireAt = nextFireAt
            self.armedAt = armedAt
            self.state = state
            self.deliveredCount = deliveredCount
            self.lastFiredAt = lastFiredAt
        }

        private enum CodingKeys: String, CodingKey {
            case reminder, nextIndex, nextFireAt, state, deliveredCount, lastFiredAt
        }

        /// Decodes the format-1 JSON shape.
        /// - Throws: `DecodingError` for a malformed field.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let reminder = try container.decode(Reminder.self, forKey: .reminder)
            reminderBytes = reminder.binaryEncoded()
            id = reminder.id
            nextIndex = try container.decodeIfPresent(Int.self, forKey: .nextIndex)
            nextFireAt = try container.decodeIfPresent(Date.self, forKey: .nextFireAt)
            armedAt = nil
            state = try container.decode(ReminderState.self, forKey: .state)
            deliveredCount = try container.decode(Int.self, forKey: .deliveredCount)
            lastFiredAt = try container.decodeIfPresent(Date.self, forKey: .lastFiredAt)
        }

        /// Encodes the format-1 JSON shape.
        /// - Throws: `EncodingError` when the bytes do not decode (a bug).
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            let reminder: Reminder
            do {
                reminder = try Reminder(binary: reminderBytes)
            } catch {
                throw EncodingError.invalidValue(
                    reminderBytes, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "\(error)"))
            }
            try container.encode(reminder, forKey: .reminder)
            try container.encodeIfPresent(nextIndex, forKey: .nextIndex)
            try container.encodeIfPresent(nextFireAt, forKey: .nextFireAt)
            try container.encode(state, forKey: .state)
            try container.encode(deliveredCount, forKey: .deliveredCount)
            try container.encodeIfPresent(lastFiredAt, forKey: .lastFiredAt)
        }
    }

    /// The newest format this code writes and reads.
    public static let currentFormatVersion = 2

    /// The format this snapshot was written in.
    public var formatVersion = CoordinatorSnapshot.currentFormatVersion
    /// Every reminder with its schedule position, by id.
    public var reminders: [ReminderRecord]
    /// Firings made and not acknowledged.
    public var unsettled: [Firing]
    /// Firings that exhausted their attempts.
    public var deadLetters: [Firing]
    /// The `seq` the next dispatch gets.
    public var nextEventSeq: UInt64
    /// Retained acknowledged events, in acknowledgement order.
    public var events: [FireEvent]
    /// Registered recipients (tokens included: the store is as secret as the configuration).
    public var recipients: [Recipient] = []
    /// Badge numbers and delivered lists by recipient.
    public var ledgers: [String: BadgeLedger] = [:]
    /// Action jobs accepted and not finished.
    public var pendingJobs: [ActionJob] = []
    /// Nag re-alerts armed and not yet due.
    public var pendingNags: [Firing] = []
    /// Answers to recent mutating requests, oldest first (in format 2 they travel in the
    /// binary part, and this JSON list is empty).
    public var answered: [AnsweredRequest] = []
    /// When the snapshot was taken (UTC): the coordinator was running then. `nil` in
    /// snapshots written before this field existed.
    public var takenAt: Date?
}

/// One remembered answer, for idempotent retries across restarts.
///
/// JSON shape: `{"requestId": "q1", "reply": "<base64 of the reply JSON>"}`; snapshots of
/// format 1 held `"outcome": {…}` instead, which is still read.
public struct AnsweredRequest: Codable, Sendable {
    /// The client's request id.
    public var requestId: String
    /// The reply sent, as encoded (`ControlOutcome.encodedReply(requestId:)`).
    public var reply: Data

    /// Makes a remembered answer.
    public init(requestId: String, reply: Data) {
        self.requestId = requestId
        self.reply = reply
    }

    private enum CodingKeys: String, CodingKey { case requestId, reply, outcome }

    /// Decodes either shape.
    /// - Throws: `DecodingError` when neither `reply` nor `outcome` is there.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        requestId = try container.decode(String.self, forKey: .requestId)
        if let reply = try container.decodeIfPresent(Data.self, forKey: .reply) {
            self.reply = reply
        } else {
            reply = try container.decode(ControlOutcome.self, forKey: .outcome).encodedReply(requestId: requestId)
        }
    }

    /// Encodes `{"requestId", "reply"}`.
    /// - Throws: what the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(requestId, forKey: .requestId)
        try container.encode(reply, forKey: .reply)
    }
}

extension CoordinatorState {
    /// Re-applies one journal entry during recovery, exactly as the live coordinator applied
    /// it when it wrote the entry.
    ///
    /// An entry that no longer validates (a zone removed from tzdata) is skipped and
    /// counted in `skippedEntries`.
    public mutating func replay(_ entry: JournalEntry) {
        switch entry {
        case .scheduled(let reminder, let at):
            do {
                let recurrence = try validate(reminder, maximumUserInfoBytes: Int.max)
                _ = apply(reminder, recurrence: recurrence, at: at)
            } catch {
                skippedEntries += 1
            }
        case .cancelled(let ids, _):
            for id in ids { removeEntry(id) }
        case .dispatched(let firingId, let reminderId, let dueAt, let attempt, let seq, let at):
            nextEventSeq = max(nextEventSeq, seq + 1)
            if var firing = recovered[firingId] {
                firing.attempt = max(firing.attempt, attempt)
                firing.seq = seq
                recovered[firingId] = firing
                return
            }
            guard let reminder = entries[reminderId]?.reminder else { return }
            var firing = Firing(
                reminderId: reminderId, recipient: reminder.recipient, dueAt: dueAt,
                content: deliveryPlan(reminder.content, for: reminder.recipient).deliveredContent ?? reminder.content,
                attempt: attempt)
            firing.firingId = firingId
            firing.seq = seq
            recovered[firingId] = firing
            advance(reminderId, pastFiringDueAt: dueAt, at: at)
        case .suppressed(_, let reminderId, let dueAt, _, let at):
            suppressedCount += 1
            advance(reminderId, pastFiringDueAt: dueAt, at: at)
            if entries[reminderId]?.state == .delivered { entries[reminderId]?.state = .suppressed }
        case .registered(let recipient, let at):
            let zoneChanged = recipients[recipient.id]?.zone != recipient.zone
            recipients[recipient.id] = recipient
            updateCap(of: recipient.id)
            if zoneChanged { followZoneChange(of: recipient.id, at: at) }
        case .badgeSet(let recipient, let value, _):
            _ = ledgers[recipient, default: BadgeLedger()].setBadge(value)
        case .handled(let firingId, _, _):
            cancelNags(of: firingId)
            if let recipient = recipient(of: firingId) {
                _ = ledgers[recipient, default: BadgeLedger()].onHandled(firingId.nagBase)
            }
        case .deliveredRemoved(let recipient, let firingId, _):
            _ = ledgers[recipient, default: BadgeLedger()].removeDelivered(firingId)
        case .switched(let ids, let enabled, let at):
            _ = switchReminders(ids, enabled, at: at)
        case .acted(let job, _):
            accept(job)
        case .answered(let requestId, let reply, _):
            // Since format 2 the entry holds the reply (`{"error"…` or `{"ok"…`); before, the
            // outcome (`{"<case>"…`).
            if reply.starts(with: Array(#"{"ok":"#.utf8)) || reply.starts(with: Array(#"{"error":"#.utf8)) {
                remember(reply, for: requestId)
            } else if let outcome = try? WireCodec().decode(ControlOutcome.self, from: reply) {
                remember(outcome.encodedReply(requestId: requestId), for: requestId)
            }
        case .actionFinished(let outcome, _):
            // Its effects were journaled as entries of their own (a snooze's `.scheduled`).
            jobs[outcome.jobId]?.outcome = outcome
            waitingJobs.removeAll { $0 == outcome.jobId }
        case .acknowledged(let firingId, let seq, let worker, let firedAt):
            guard var firing = recovered.removeValue(forKey: firingId) else { return }
            firing.seq = seq
            retain(FireEvent(seq: seq, publisher: worker, firing: firing, firedAt: firedAt))
            _ = ledgers[firing.recipient, default: BadgeLedger()].onDelivered(
                firing, at: firedAt, badge: firing.content.badgeChange)
            armNags(after: firing, deliveredAt: firedAt)
            if var entry = entries[firing.reminderId] {
                entry.deliveredCount += 1
                entry.lastFiredAt = max(entry.lastFiredAt ?? firedAt, firedAt)
                entries[firing.reminderId] = entry
            }
        case .deadLettered(let firingId, _):
            if let firing = recovered.removeValue(forKey: firingId) {
                deadLetters[firingId] = firing
            }
        case .retried(let firingId, _):
            if var firing = deadLetters.removeValue(forKey: firingId) {
                firing.attempt = 0
                recovered[firingId] = firing
            }
        }
    }

    /// Moves a reminder past the occurrence that fired (or was suppressed) at `dueAt`, as
    /// `onTick` did when it wrote the entry.
    mutating func advance(_ reminderId: ReminderID, pastFiringDueAt dueAt: Date, at: Date) {
        guard var entry = entries[reminderId], let occurrence = entry.next else { return }
        let reminder = entry.reminder
        guard fireInstant(of: reminder, occurrence) == dueAt else { return }
        let trigger = reminder.trigger
        entry.next = (trigger.isRepeating ? recurrence(of: reminder) : nil).flatMap {
            Self.occurrence(after: occurrence, in: $0, notBefore: trigger.eventInstant(fireInstant: at))
        }
        if let next = entry.next, entry.state == .pending {
            arm(reminderId, of: entry.recipient, at: trigger.fireInstant(eventInstant: next.instant))
        } else if entry.next == nil {
            entry.state = trigger.isRepeating ? .finished : .delivered
            disarm(reminderId, of: entry.recipient)
        }
        entries[reminderId] = entry
    }

    /// Ends recovery at `now`: firings made but never acknowledged wait for redelivery with
    /// their firing ids (attempt + 1), and occurrences due before `now` count as misfires.
    ///
    /// Dispatch does not wait for the journal, so a firing handed out just before a crash may
    /// have no durable `dispatched` entry: its occurrence is then a misfire like any other due
    /// while the coordinator was down (fired late, same firing id, under `fireOnce`).
    /// - Parameter skipsEventSeqs: whether event `seq` numbers restart
    ///   `eventSeqGapAfterRecovery` past the newest durable one (recovery from a non-empty
    ///   store), beyond any seq a lost `dispatched` entry carried: subscribers deduplicate and
    ///   resume by seq, so a seq must never name two firings.
    public mutating func finishRecovery(at now: Date, skipsEventSeqs: Bool = false) {
        recoveredAt = now
        if skipsEventSeqs { nextEventSeq += configuration.eventSeqGapAfterRecovery }
        let unsettled = recovered.values.sorted { ($0.dueAt, $0.firingId) < ($1.dueAt, $1.firingId) }
        recovered.removeAll()
        for var firing in unsettled {
            firing.attempt += 1
            firing.seq = nil
            waiting.append(firing)
        }
    }

    /// The durable state, for a snapshot taken between loop turns at `now`.
    public func makeSnapshot(at now: Date = Date()) -> CoordinatorSnapshot {
        var unsettled = Array(waiting[waitingStart...]) + inFlight.values.map(\.firing) + Array(recovered.values)
        unsettled.sort { ($0.dueAt, $0.firingId) < ($1.dueAt, $1.firingId) }
        var reminders: [CoordinatorSnapshot.ReminderRecord] = []
        reminders.reserveCapacity(entries.count)
        for (id, entry) in entries {
            reminders.append(CoordinatorSnapshot.ReminderRecord(
                reminderBytes: entry.bytes, id: id, nextIndex: entry.next?.index, nextFireAt: entry.next?.instant,
                armedAt: schedule.deadline(of: id) ?? armedAt(of: id, entry), state: entry.state,
                deliveredCount: entry.deliveredCount, lastFiredAt: entry.lastFiredAt))
        }
        return CoordinatorSnapshot(
            reminders: reminders, unsettled: unsettled,
            deadLetters: deadLetters.values.sorted { $0.firingId < $1.firingId }, nextEventSeq: nextEventSeq,
            events: Array(retainedEvents[retainedStart...]),
            recipients: recipients.values.sorted { $0.id < $1.id },
            ledgers: Dictionary(uniqueKeysWithValues: ledgers.map { ($0.key.rawValue, $0.value) }),
            pendingJobs: jobs.values.filter { $0.outcome == nil }.map(\.job).sorted { $0.jobId < $1.jobId },
            pendingNags: nagFirings.values.sorted { ($0.dueAt, $0.firingId) < ($1.dueAt, $1.firingId) },
            answered: rememberedReplies.map { AnsweredRequest(requestId: $0.requestId, reply: $0.reply) },
            takenAt: now)
    }

    /// The fire instant of a pending reminder that is not in `schedule` (held back by its
    /// recipient's cap), computed from the reminder.
    func armedAt(of id: ReminderID, _ entry: Entry) -> Date? {
        guard entry.state == .pending, let next = entry.next else { return nil }
        return fireInstant(of: entry.reminder, next)
    }

    /// Loads a snapshot into an empty state; journal entries after it are then `replay`ed.
    /// - Throws: `WireError(.invalidArgument)` for a snapshot of a newer format version.
    public mutating func load(_ snapshot: CoordinatorSnapshot) throws(WireError) {
        guard snapshot.formatVersion <= CoordinatorSnapshot.currentFormatVersion else {
            throw WireError(
                .invalidArgument,
                "snapshot format \(snapshot.formatVersion) is newer than this coordinator's \(CoordinatorSnapshot.currentFormatVersion)")
        }
        // Recipients first: their zones resolve recipient-zone reminders and their
        // `maxPending` caps decide what is armed.
        for recipient in snapshot.recipients { recipients[recipient.id] = recipient }
        for (id, ledger) in snapshot.ledgers { ledgers[RecipientID(id)] = ledger }
        entries.reserveCapacity(snapshot.reminders.count)
        // Reminders of recipients without a cap are armed in one bulk build of the heap.
        var uncapped: [(key: ReminderID, deadline: Date)] = []
        uncapped.reserveCapacity(snapshot.reminders.count)
        for record in snapshot.reminders {
            let next = zip(record.nextIndex, record.nextFireAt).map { Occurrence(index: $0, instant: $1) }
            guard let entry = try? Entry(
                bytes: record.reminderBytes, next: next, state: record.state, deliveredCount: record.deliveredCount,
                lastFiredAt: record.lastFiredAt)
            else {
                skippedEntries += 1
                continue
            }
            var armedAt = record.armedAt
            // Repeating reminders need their sequence (which also re-checks the zone); a
            // one-shot with its fire instant recorded is taken as it is, undecoded.
            if armedAt == nil || entry.isRepeating {
                let reminder = entry.reminder
                guard let recurrence = try? validate(reminder, maximumUserInfoBytes: Int.max) else {
                    skippedEntries += 1
                    continue
                }
                if reminder.trigger.isRepeating { recurrences[record.id] = recurrence }
                armedAt = armedAt ?? next.map { fireInstant(of: reminder, $0) }
            }
            entries[record.id] = entry
            if record.state == .pending, let armedAt {
                if pendingLimit(for: entry.recipient) == nil {
                    uncapped.append((record.id, armedAt))
                } else {
                    arm(record.id, of: entry.recipient, at: armedAt)
                }
            }
        }
        schedule.schedule(contentsOf: uncapped)
        for firing in snapshot.unsettled { recovered[firing.firingId] = firing }
        for firing in snapshot.deadLetters { deadLetters[firing.firingId] = firing }
        nextEventSeq = max(nextEventSeq, snapshot.nextEventSeq)
        for job in snapshot.pendingJobs { accept(job) }
        for answer in snapshot.answered { remember(answer.reply, for: answer.requestId) }
        for nag in snapshot.pendingNags {
            nagFirings[nag.firingId] = nag
            nags.schedule(nag.firingId, at: nag.dueAt)
        }
        for event in snapshot.events { retain(event) }
    }
}

private func zip<A, B>(_ a: A?, _ b: B?) -> (A, B)? {
    guard let a, let b else { return nil }
    return (a, b)
}
