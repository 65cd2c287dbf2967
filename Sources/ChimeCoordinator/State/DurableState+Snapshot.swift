import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

/// A snapshot is a `DurableState` encoded, and loading one is decoding it: no second
/// interpretation of the state exists.
///
/// Payload (format 5): the byte 4; a u32 little-endian byte count and that many bytes of JSON,
/// `{"formatVersion":5,"takenAt","settings","epoch","deliveries","recipients","jobs","moves","triggers"}`
/// (`triggers`, ``TriggerState/Record``, absent when empty: snapshots without it read as before)
/// (each part encoded by its own record type: ``Deliveries/Record``, ``Recipients/Record``,
/// ``ActionJobs/SnapshotRecord``, ``SlotMoveLedger/Record``, whose adopted slices are nested
/// snapshot payloads; format 4, written by earlier versions, is the same without `moves`); then the schedule in binary: a varint count and per reminder
/// its id (varint length + UTF-8), its `Reminder.binaryEncoded()` bytes (varint length +
/// bytes), a flags byte (1: next occurrence, 4: last fired), the next occurrence's index
/// (zigzag varint) and instant, the state (its index in `ReminderState.allCases`), the
/// delivered count (varint) and the last fired instant, in id order; then the late-firing
/// counts (a varint count, per reminder its key and count); then the request log (a varint
/// count, per reply its request id, a flags byte (1: a recipient follows), the recipient the
/// request was about and the reply's bytes, oldest first). Instants are f64 little-endian
/// seconds since 2001-01-01T00:00:00Z (exact); varints are LEB128. What the state derives
/// (the timer, the caps, the recurrence cache, the paging indexes) is rebuilt by decoding
/// through the same functions the fold uses.
///
/// Payloads of format 3 (marker byte 2, written by earlier versions) are still read
/// (`DurableState+LegacySnapshot.swift`).
extension DurableState {
    /// The first byte of a format-4 or format-5 payload.
    static let snapshotMarker: UInt8 = 4
    /// The format this code writes.
    public static let snapshotFormatVersion = 5
    /// The format of earlier versions this code still reads with the same marker (no `moves`).
    static let previousSnapshotFormatVersion = 4

    struct SnapshotHeader: Codable {
        var formatVersion: Int
        var takenAt: Date?
        var settings: DurableSettings
        var epoch: UInt64
        var deliveries: Deliveries.Record
        var recipients: Recipients.Record
        var jobs: ActionJobs.SnapshotRecord
        var moves: SlotMoveLedger.Record?
        /// The triggers beyond the clock (absent when empty, and in snapshots of earlier versions).
        var triggers: TriggerState.Record?
    }

    /// The JSON part of a snapshot taken at `takenAt` (UTC).
    public func snapshotHeader(takenAt: Date?) -> Data {
        WireCodec().encode(SnapshotHeader(
            formatVersion: Self.snapshotFormatVersion, takenAt: takenAt, settings: settings, epoch: highestRecordedEpoch,
            deliveries: deliveries.record, recipients: recipients.record, jobs: actionJobs.snapshotRecord,
            moves: moves.isEmpty ? nil : moves.record, triggers: triggers.isEmpty ? nil : triggers.record))
    }

    /// The whole payload of a snapshot taken at `takenAt` (UTC), in memory.
    public func encodedSnapshot(takenAt: Date?) -> Data {
        let header = snapshotHeader(takenAt: takenAt)
        var counter = ByteCounter()
        encodeSnapshot(header: header, into: &counter)
        var writer = ByteWriter(capacity: counter.count)
        encodeSnapshot(header: header, into: &writer)
        return Data(writer.bytes)
    }

    /// Writes the payload (see the type's documentation) to `sink`, `header` being
    /// ``snapshotHeader(takenAt:)``: into a `ByteCounter` for its length, then into the store's
    /// streaming sink, so a snapshot is never held whole in memory.
    public func encodeSnapshot<Sink: BinarySink>(header: Data, into writer: inout Sink) {
        writer.writeByte(Self.snapshotMarker)
        withUnsafeBytes(of: UInt32(clamping: header.count).littleEndian) { writer.writeBytes($0) }
        header.withUnsafeBytes { writer.writeBytes($0) }
        writer.writeCount(schedule.entries.count)
        for key in schedule.index {
            guard let entry = schedule.entries[key] else { continue }
            writer.writeString(key.storage)
            writer.writeCount(entry.bytes.count)
            entry.bytes.withUnsafeBytes { writer.writeBytes($0) }
            writer.writeByte((entry.next == nil ? 0 : 1) | (entry.lastFiredAt == nil ? 0 : 4))
            if let next = entry.next {
                writer.writeInt(next.index)
                writer.writeInstant(next.instant)
            }
            writer.writeByte(UInt8(ReminderState.allCases.firstIndex(of: entry.state) ?? 0))
            writer.writeCount(entry.deliveredCount)
            if let lastFiredAt = entry.lastFiredAt { writer.writeInstant(lastFiredAt) }
        }
        writer.writeCount(schedule.lateFirings.count)
        for (key, count) in schedule.lateFirings.sorted(by: { $0.key < $1.key }) {
            writer.writeString(key.storage)
            writer.writeCount(count)
        }
        let answers = requestLog.taggedEntries
        writer.writeCount(answers.count)
        for answer in answers {
            writer.writeString(answer.requestId)
            writer.writeByte(answer.recipient == nil ? 0 : 1)
            if let recipient = answer.recipient { writer.writeString(recipient.rawValue) }
            writer.writeCount(answer.reply.count)
            answer.reply.withUnsafeBytes { writer.writeBytes($0) }
        }
    }

    /// A state decoded from a snapshot payload.
    public struct DecodedSnapshot: Sendable {
        /// The state.
        public var state: DurableState
        /// When the snapshot was taken (UTC), if it says.
        public var takenAt: Date?
        /// Reminders left out because they no longer validate (a zone removed from tzdata).
        public var skippedReminders: Int
    }

    /// Decodes a snapshot payload of format 5 or 4, or of format 3 (whose settings were not
    /// recorded: `seed` stands for them, as the version that wrote it folded with the
    /// configuration it ran with).
    /// - Throws: `WireError(.invalidArgument)` for a payload that does not decode or a format
    ///   newer than this code's.
    public static func decodeSnapshot(_ payload: Data, seed: DurableSettings) throws(WireError) -> DecodedSnapshot {
        switch payload.first {
        case snapshotMarker: return try decodeCurrentSnapshot(payload)
        case CoordinatorSnapshot.binaryPayloadMarker: return try decodeLegacySnapshot(payload, seed: seed)
        default:
            throw WireError(.invalidArgument, "the snapshot starts with byte \(payload.first.map(String.init) ?? "none"), which is not a snapshot format this version reads")
        }
    }

    private static func decodeCurrentSnapshot(_ payload: Data) throws(WireError) -> DecodedSnapshot {
        let bytes = [UInt8](payload)
        guard bytes.count >= 5 else { throw WireError(.invalidArgument, "the snapshot is truncated") }
        let jsonLength = Int(bytes[1]) | Int(bytes[2]) << 8 | Int(bytes[3]) << 16 | Int(bytes[4]) << 24
        guard jsonLength <= bytes.count - 5 else { throw WireError(.invalidArgument, "the snapshot is truncated") }
        let header: SnapshotHeader
        do {
            header = try WireCodec().decode(SnapshotHeader.self, from: Data(bytes[5..<5 + jsonLength]))
        } catch {
            throw WireError(.invalidArgument, "the snapshot does not decode: \(error.message)")
        }
        guard header.formatVersion == snapshotFormatVersion || header.formatVersion == previousSnapshotFormatVersion else {
            throw WireError(
                .invalidArgument, "snapshot format \(header.formatVersion) is not this coordinator's \(snapshotFormatVersion)")
        }
        var state = DurableState(settings: header.settings)
        state.highestRecordedEpoch = header.epoch
        // Recipients first: their zones resolve recipient-zone reminders and their `maxPending`
        // caps decide what is armed.
        state.recipients = Recipients(header.recipients)
        state.deliveries = try Deliveries(header.deliveries, eventRetention: header.settings.eventRetention)
        state.actionJobs = ActionJobs(header.jobs)
        if let moves = header.moves { state.moves = try SlotMoveLedger(moves, settings: header.settings) }
        if let triggers = header.triggers { state.triggers = TriggerState(triggers) }
        var skipped = 0
        do {
            var reader = ByteReader(bytes[(5 + jsonLength)...])
            let count = try reader.readCount()
            var restored: [RestoredReminder] = []
            restored.reserveCapacity(min(count, bytes.count / 8))
            for _ in 0..<count {
                let id = try Self.readKey(&reader)
                let reminderBytes = Array(try reader.readBytes(try reader.readCount()))
                let flags = try reader.readByte()
                guard flags & ~5 == 0 else { throw WireError(.invalidArgument, "the snapshot's flags of \(id) are \(flags)") }
                var next: Occurrence?
                if flags & 1 != 0 { next = Occurrence(index: try reader.readInt(), instant: try reader.readInstant()) }
                let stateIndex = Int(try reader.readByte())
                guard stateIndex < ReminderState.allCases.count else {
                    throw WireError(.invalidArgument, "the snapshot names reminder state \(stateIndex) for \(id)")
                }
                // A number, not a length: it may exceed the bytes that remain.
                guard let deliveredCount = Int(exactly: try reader.readVarint()) else {
                    throw WireError(.invalidArgument, "the snapshot's delivered count of \(id) is out of range")
                }
                let lastFiredAt = flags & 4 != 0 ? try reader.readInstant() : nil
                restored.append(RestoredReminder(
                    id: id, bytes: reminderBytes, next: next, state: ReminderState.allCases[stateIndex],
                    deliveredCount: deliveredCount, lastFiredAt: lastFiredAt))
            }
            skipped = try state.restore(restored)
            state.rebuildTriggerIndexes()
            for _ in 0..<(try reader.readCount()) {
                let id = try Self.readKey(&reader)
                guard let late = Int(exactly: try reader.readVarint()) else {
                    throw WireError(.invalidArgument, "the snapshot's late count of \(id) is out of range")
                }
                if state.schedule.entries[id] != nil { state.schedule.lateFirings[id] = late }
            }
            for _ in 0..<(try reader.readCount()) {
                let requestId = try reader.readString()
                let flags = try reader.readByte()
                guard flags & ~1 == 0 else { throw WireError(.invalidArgument, "the snapshot's reply to \(requestId) has flags \(flags)") }
                let recipient = flags & 1 != 0 ? RecipientID(try reader.readString()) : nil
                state.requestLog.remember(Data(try reader.readBytes(try reader.readCount())), for: requestId, recipient: recipient)
            }
            guard reader.remainingCount == 0 else {
                throw WireError(.invalidArgument, "the snapshot has \(reader.remainingCount) bytes after its request log")
            }
        } catch let error as WireError {
            throw error
        } catch {
            throw WireError(.invalidArgument, "the snapshot's reminders do not decode: \(error)")
        }
        return DecodedSnapshot(state: state, takenAt: header.takenAt, skippedReminders: skipped)
    }

    /// A reminder key as a snapshot holds it (`ReminderKey.storage`, naming its recipient).
    private static func readKey(_ reader: inout ByteReader) throws -> ReminderKey {
        let storage = try reader.readString()
        guard let key = ReminderKey(storage: storage), !key.isLegacy else {
            throw WireError(.invalidArgument, "the snapshot names reminder \(storage.debugDescription), which is not a reminder key")
        }
        return key
    }

    /// One reminder as a snapshot holds it.
    struct RestoredReminder {
        var id: ReminderKey
        var bytes: [UInt8]
        var next: Occurrence?
        var state: ReminderState
        var deliveredCount: Int
        var lastFiredAt: Date?
    }

    /// Puts reminders read from a snapshot (in id order) into an empty schedule and arms the
    /// pending ones where the fold would have: at their next occurrence's fire instant, under
    /// their recipient's cap.
    /// - Returns: how many were left out because they no longer validate.
    /// - Throws: `WireError(.invalidArgument)` for reminder bytes that do not decode.
    mutating func restore(_ reminders: [RestoredReminder]) throws(WireError) -> Int {
        var skipped = 0
        schedule.entries.reserveCapacity(reminders.count)
        // Reminders of recipients without a cap are armed in one bulk build of the heap.
        var uncapped: [(key: ReminderKey, deadline: Date)] = []
        uncapped.reserveCapacity(reminders.count)
        var ids: [ReminderKey] = []
        ids.reserveCapacity(reminders.count)
        for var record in reminders {
            // A NaN or infinite instant is damage (no write makes one): refused, so a state
            // never holds an instant that is not equal to itself or cannot be armed.
            guard record.next?.instant.timeIntervalSinceReferenceDate.isFinite ?? true,
                record.lastFiredAt?.timeIntervalSinceReferenceDate.isFinite ?? true
            else {
                throw WireError(.invalidArgument, "the snapshot's reminder \(record.id) has an instant that is not a finite number")
            }
            let entry: ReminderEntry
            do {
                entry = try ReminderEntry(
                    bytes: record.bytes, next: record.next, state: record.state, deliveredCount: record.deliveredCount,
                    lastFiredAt: record.lastFiredAt)
            } catch {
                throw WireError(.invalidArgument, "the snapshot's reminder \(record.id) does not decode: \(error)")
            }
            // A format-3 snapshot names a reminder by its id: its key takes the reminder's recipient.
            if record.id.isLegacy { record.id = record.id.resolved(to: entry.recipient) }
            guard ReminderKey(storage: record.id.storage) != nil else {
                throw WireError(.invalidArgument, "the snapshot's reminder \(record.id) has an empty id or recipient")
            }
            guard record.id.recipient == entry.recipient else {
                throw WireError(.invalidArgument, "the snapshot's reminder \(record.id) holds recipient \(entry.recipient)'s reminder")
            }
            // Repeating reminders need their sequence (which also re-checks the zone); a
            // one-shot is taken as it is, decoded only when it has a remind-before offset.
            if entry.isRepeating {
                // Decoded whole here (the summary checked only its head): bytes that do not
                // decode are a damaged snapshot, refused, never a trap later.
                let reminder: Reminder
                do {
                    reminder = try Reminder(binary: entry.bytes[...])
                } catch {
                    throw WireError(.invalidArgument, "the snapshot's reminder \(record.id) does not decode: \(error)")
                }
                guard let recurrence = try? validate(reminder, maximumUserInfoBytes: Int.max) else {
                    skipped += 1
                    continue
                }
                schedule.recurrences[record.id] = recurrence
            }
            let armedAt = entry.state == .pending ? entry.next.map { entry.fireInstant(of: $0) } : nil
            schedule.entries[record.id] = entry
            ids.append(record.id)
            guard let armedAt else { continue }
            if let limit = pendingLimit(for: entry.recipient) {
                schedule.arm(record.id, of: entry.recipient, at: armedAt, limit: limit)
            } else {
                uncapped.append((record.id, armedAt))
            }
        }
        schedule.timer.schedule(contentsOf: uncapped)
        // Sorted already when the snapshot was written in id order: the sort is then one run.
        schedule.index = SortedKeySet(ids)
        return skipped
    }
}

extension Deliveries {
    /// A dead letter's failure in the snapshot.
    struct FailureRecord: Codable {
        var firingId: FiringID
        var failure: DeliveryFailure
    }

    /// The snapshot form of the deliveries.
    struct Record: Codable {
        var unsettled: [Firing]
        var deadLetters: [Firing]
        /// Why dead letters whose destinations failed were dead-lettered (absent in snapshots
        /// of earlier versions, and when there are none).
        var deadLetterFailures: [FailureRecord]?
        /// The destinations that already have each firing in ``Deliveries/retrySkips`` (absent
        /// when none, and in snapshots of earlier versions).
        var retrySkips: [RetrySkipRecord]?
        var nags: [Firing]
        var events: [FireEvent]
        var eventSeqReserved: UInt64
        /// The held firings (quiet hours, summaries, throttles), in release order (absent
        /// when none, and in snapshots of earlier versions).
        var held: [HeldFiring]?
    }

    /// A firing's ``Deliveries/retrySkips`` in the snapshot.
    struct RetrySkipRecord: Codable {
        var firingId: FiringID
        var destinations: [String]
    }

    /// A held firing, when it is released (UTC) and why it is held (absent in snapshots of
    /// earlier versions).
    struct HeldFiring: Codable {
        var firing: Firing
        var until: Date
        var reason: HoldReason?
    }

    var record: Record {
        Record(
            unsettled: unsettled.values.map(\.firing).sorted { ($0.dueAt, $0.firingId) < ($1.dueAt, $1.firingId) },
            deadLetters: deadLetters.values.sorted { $0.firingId < $1.firingId },
            deadLetterFailures: deadLetterFailures.isEmpty
                ? nil : deadLetterFailures.sorted { $0.key < $1.key }.map { FailureRecord(firingId: $0.key, failure: $0.value) },
            retrySkips: retrySkips.isEmpty
                ? nil : retrySkips.sorted { $0.key < $1.key }.map { RetrySkipRecord(firingId: $0.key, destinations: $0.value) },
            nags: nagFirings.values.sorted { ($0.dueAt, $0.firingId) < ($1.dueAt, $1.firingId) },
            events: Array(eventLog.events), eventSeqReserved: eventSeqReserved,
            held: heldFirings.isEmpty ? nil : heldFirings.values.compactMap { firing in
                holds.deadline(of: firing.firingId).map { HeldFiring(firing: firing, until: $0, reason: holdReasons[firing.firingId]) }
            }.sorted { ($0.until, $0.firing.firingId) < ($1.until, $1.firing.firingId) })
    }

    /// The deliveries a snapshot holds.
    /// - Throws: `WireError(.invalidArgument)` when a nag is due at an instant that no longer
    ///   matches its firing (a damaged snapshot).
    init(_ record: Record, eventRetention: Int) throws(WireError) {
        self.init(eventRetention: eventRetention)
        for var firing in record.unsettled {
            firing.seq = nil
            unsettled[firing.firingId] = SharedFiring(firing)
        }
        for firing in record.deadLetters { deadLetters[firing.firingId] = firing }
        for failure in record.deadLetterFailures ?? [] where deadLetters[failure.firingId] != nil {
            deadLetterFailures[failure.firingId] = failure.failure
        }
        for skip in record.retrySkips ?? [] where deadLetters[skip.firingId] != nil || unsettled[skip.firingId] != nil {
            retrySkips[skip.firingId] = skip.destinations
        }
        deadLetterIndex = SortedKeySet(deadLetters.keys.map(DeadLetterKey.init))
        for nag in record.nags {
            nagFirings[nag.firingId] = nag
            nags.schedule(nag.firingId, at: nag.dueAt)
        }
        for held in record.held ?? [] {
            heldFirings[held.firing.firingId] = held.firing
            holds.schedule(held.firing.firingId, at: held.until)
            holdReasons[held.firing.firingId] = held.reason
        }
        for event in record.events { eventLog.retain(event) }
        eventSeqReserved = record.eventSeqReserved
        rebuildAhead()
        rebuildThrottleHeld()
    }
}

extension Recipients {
    /// The snapshot form of the recipients.
    struct Record: Codable {
        var recipients: [Recipient]
        var ledgers: [String: BadgeLedger]
        var badgeEventSeq: UInt64
        /// The throttled recipients' latest delivery instants against their recipient-wide
        /// allowance (absent when none, and in snapshots of earlier versions).
        var throttleSlots: [String: [Date]]?
        /// Those of the allowances per category or thread, by recipient, then category or
        /// thread (absent when none, and in snapshots of earlier versions).
        var throttleGroupSlots: [String: [String: [Date]]]?
    }

    var record: Record {
        Record(
            recipients: registered.values.sorted { $0.id < $1.id },
            ledgers: Dictionary(uniqueKeysWithValues: ledgers.map { ($0.key.rawValue, $0.value) }), badgeEventSeq: badgeEventSeq,
            throttleSlots: recipientWide.isEmpty ? nil : recipientWide,
            throttleGroupSlots: grouped.isEmpty ? nil : grouped)
    }

    /// The recipient-wide allowances' slots (the `""` group), by recipient, as snapshots
    /// before per-category throttles wrote them.
    private var recipientWide: [String: [Date]] {
        var slots: [String: [Date]] = [:]
        for (id, groups) in throttleSlots where registered[id]?.throttle?.per ?? .recipient == .recipient {
            slots[id.rawValue] = groups[""] ?? []
        }
        return slots
    }

    /// The per-category and per-thread allowances' slots, by recipient.
    private var grouped: [String: [String: [Date]]] {
        var slots: [String: [String: [Date]]] = [:]
        for (id, groups) in throttleSlots where registered[id]?.throttle?.per ?? .recipient != .recipient {
            slots[id.rawValue] = groups
        }
        return slots
    }

    init(_ record: Record) {
        for recipient in record.recipients { store(recipient) }
        for (id, ledger) in record.ledgers { ledgers[RecipientID(id)] = ledger }
        badgeEventSeq = record.badgeEventSeq
        for (id, slots) in record.throttleSlots ?? [:] { throttleSlots[RecipientID(id)] = slots.isEmpty ? [:] : ["": slots] }
        for (id, groups) in record.throttleGroupSlots ?? [:] { throttleSlots[RecipientID(id)] = groups }
    }
}

extension ActionJobs {
    /// The snapshot form of the jobs: the unfinished in id order, the finished in the order
    /// they finished.
    struct SnapshotRecord: Codable {
        var unfinished: [Record]
        var finished: [Record]
    }

    var snapshotRecord: SnapshotRecord {
        SnapshotRecord(
            unfinished: unfinished.compactMap { self[$0.jobId] }, finished: finished)
    }

    init(_ record: SnapshotRecord) { self.init(unfinished: record.unfinished, finished: record.finished) }
}
