import ChimeCore
import ChimeWire
import Foundation

/// Long listings, one page per request (issue 15: no op holds the loop).
///
/// Each page continues in key order after its cursor's key — reminders by id then recipient, dead letters by
/// due millisecond then firing id, events by `seq` — walking an ordered index from there
/// (`reminderIndex`, `deadLetterIndex`), so a page costs O(log N + page) and never a sort or a
/// scan of every item. A key-ordered continuation is stable: an item present from the first
/// page to the last is listed exactly once, whatever was added or removed meanwhile (items
/// added behind the cursor are not listed; removed ones are not listed again).
extension CoordinatorState {
    /// The most reminders one `list` page examines (or twice its size, if more): a selective filter (a rare `match`, a
    /// recipient with few reminders) ends its page early, with a `nextCursor` at the last
    /// reminder examined, instead of scanning all of them in one loop turn.
    static let maximumExaminedPerPage = 5000

    /// One page of `list` at `now`: the reminders matching `filter` after `cursor`, in key
    /// order (id, then recipient). A reminder whose firing is held ahead of its due instant
    /// reads as pending (``reported(_:_:at:)``).
    func list(
        _ filter: ReminderFilter, includeInactive: Bool, limit: Int?, cursor: PageCursor?, for client: ClientAddress? = nil,
        at now: Date
    ) -> ControlOutcome {
        let pageSize: Int
        let after: ReminderKey?
        do throws(WireError) {
            pageSize = try PageSize.checked(limit)
            after = try cursor.map { cursor throws(WireError) in
                // A cursor of an earlier version holds a bare id: the page goes on after it.
                guard let key = ReminderKey(storage: try Self.textKey(of: cursor)) else { throw Self.invalidCursor }
                return key
            }
        } catch {
            return .failed(error)
        }
        var page: [ListingPage.Item] = []
        page.reserveCapacity(min(pageSize, entries.count))
        var pageKeys: [ReminderKey] = []
        var examined = 0
        var lastExamined: ReminderKey?
        var isComplete = true
        let budget = max(Self.maximumExaminedPerPage, 2 * pageSize)
        // Only a userInfo match needs the reminder decoded; ids and recipient are on the key.
        let isMatching = !(filter.match?.isEmpty ?? true)
        // A handed-over slot's reminders are the target's to list; data of slots the map gave
        // away outside a move is listed by no one.
        let isRestricted = isServingRestricted
        // Named ids without a recipient name every recipient's reminder of that id.
        let candidates = filter.ids.map { durable.keys(named: Array(Set($0)).sorted(), of: filter.recipient, after: after) }
            ?? AnySequence(reminderIndex.keys(after: after))
        for key in candidates {
            if page.count == pageSize || examined == budget {
                isComplete = false
                break
            }
            examined += 1
            lastExamined = key
            guard let entry = entries[key], client?.sees(entry.recipient) ?? true else { continue }
            if let recipient = filter.recipient, entry.recipient != recipient { continue }
            if isRestricted && !serves(entry.recipient) { continue }
            let reported = reported(key, entry, at: now)
            guard includeInactive || reported.state == .pending else { continue }
            if isMatching && !filter.matches(entry.reminder) { continue }
            page.append(listingItem(of: entry, reported, key: key))
            pageKeys.append(key)
        }
        // Held firings, looked up once for the page (one pass over the held firings), not
        // once per reminder listed.
        if durable.heldCount > 0 {
            let held = durable.heldListings(of: Set(pageKeys))
            for index in page.indices { page[index].held = held[pageKeys[index]] }
        }
        let nextCursor = isComplete ? nil : lastExamined.map { PageCursor(kind: .list, text: $0.storage).text }
        return .listed(ListingPage(
            items: page, total: cursor == nil && nextCursor == nil ? page.count : nil, nextCursor: nextCursor))
    }

    /// How `list` shows one reminder as `reported`, without decoding it (the reply encoder
    /// does that).
    func listingItem(of entry: Entry, _ reported: ReportedReminder, key: ReminderKey? = nil) -> ListingPage.Item {
        let triggers = durable.triggers
        return ListingPage.Item(
            bytes: entry.bytes, state: reported.state, nextFireAt: reported.nextFireAt,
            deliveredCount: entry.deliveredCount, lastFiredAt: entry.lastFiredAt, armed: reported.armed,
            // Derived: a one-shot ends `finished` only when its occurrence was skipped.
            reason: reported.state == .finished && !entry.isRepeating ? ReminderListing.skippedByMisfire : nil,
            remaining: key.flatMap { triggers.remaining.isEmpty ? nil : triggers.remaining[$0] },
            note: key.flatMap { triggers.notes.isEmpty ? nil : triggers.notes[$0] }, key: key)
    }

    /// One page of `deadLetters`: oldest due first, after `cursor`.
    func deadLetterPage(limit: Int?, cursor: PageCursor?) -> ControlOutcome {
        let pageSize: Int
        let after: DeadLetterKey?
        do throws(WireError) {
            pageSize = try PageSize.checked(limit)
            after = try cursor.map { cursor throws(WireError) in
                guard let firingId = FiringID(try Self.textKey(of: cursor)) else { throw Self.invalidCursor }
                return DeadLetterKey(firingId)
            }
        } catch {
            return .failed(error)
        }
        var firings: [Firing] = []
        var nextCursor: String?
        for key in deadLetterIndex.keys(after: after) {
            if firings.count == pageSize {
                nextCursor = firings.last.map { PageCursor(kind: .deadLetters, text: $0.firingId.description).text }
                break
            }
            if let firing = deadLetters[key.firingId] { firings.append(firing) }
        }
        var failures: [String: DeliveryFailure] = [:]
        if !durable.deliveries.deadLetterFailures.isEmpty {
            for firing in firings {
                if let failure = durable.deliveries.deadLetterFailures[firing.firingId] { failures[firing.firingId.description] = failure }
            }
        }
        return .deadLetters(DeadLettersResult(firings: firings, nextCursor: nextCursor, failures: failures.isEmpty ? nil : failures))
    }

    /// One page of `events`: retained events with `seq` above `after` (or the cursor's
    /// `seq`), in `seq` order, and the settled watermark; without a recipient, also the
    /// retained hand-over events up to that watermark. The retention window is bounded
    /// (`eventRetention`), so its filter stays cheap.
    func eventPage(after: UInt64, recipient: RecipientID?, limit: Int?, cursor: PageCursor?) -> ControlOutcome {
        let pageSize: Int
        var after = after
        do throws(WireError) {
            pageSize = try PageSize.checked(limit)
            if let cursor {
                guard let seq = cursor.seqKey else { throw Self.invalidCursor }
                after = seq
            }
        } catch {
            return .failed(error)
        }
        let (found, truncated) = eventLog.events(after: after, recipient: recipient, limit: pageSize)
        var selected = found
        if let shard = configuration.eventShard {
            for index in selected.indices { selected[index].shard = shard }
        }
        let oldestInFlight = dispatch.inFlight.values.map(\.seq).min()
        let settled = (oldestInFlight ?? dispatch.nextEventSeq) - 1
        let through = truncated ? min(settled, selected.last?.seq ?? settled) : settled
        // Hand-overs are about slots, not one recipient; a page holds those within its seqs.
        let handOvers = recipient == nil ? durable.moves.handOvers.filter { $0.seq > after && $0.seq <= through } : []
        return .events(EventsResult(
            events: selected, through: through, oldestRetained: eventLog.oldestSeq, truncated: truncated,
            nextCursor: truncated ? selected.last.map { PageCursor(afterSeq: $0.seq).text } : nil,
            handOvers: handOvers.isEmpty ? nil : handOvers))
    }

    static let invalidCursor = WireError(
        .invalidArgument, "the cursor is not valid; pass back a nextCursor unchanged", field: "cursor")

    /// The text key of a `list` or `deadLetters` cursor.
    /// - Throws: ``invalidCursor`` when its bytes are not UTF-8.
    static func textKey(of cursor: PageCursor) throws(WireError) -> String {
        guard let text = cursor.textKey else { throw invalidCursor }
        return text
    }
}
