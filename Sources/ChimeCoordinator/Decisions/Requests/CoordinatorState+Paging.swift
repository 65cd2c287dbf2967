import ChimeCore
import ChimeWire
import Foundation

/// Long listings, one page per request (issue 15: no op holds the loop).
///
/// Each page continues in key order after its cursor's key — reminders by id then recipient
/// (or by next firing, then key), dead letters by due millisecond then firing id, events by
/// `seq` — walking an ordered index from there (`reminderIndex`, `entries.byNextFire`,
/// `deadLetterIndex`; one recipient's reminders `entries.byRecipient`), so a page costs
/// O(log N + page) and never a sort or a scan of every item. A key-ordered continuation is stable: an item present from the first
/// page to the last is listed exactly once, whatever was added or removed meanwhile (items
/// added behind the cursor are not listed; removed ones are not listed again).
extension CoordinatorState {
    /// The most reminders one `list` page examines (or twice its size, if more): a selective filter (a rare `match`, a
    /// recipient with few reminders) ends its page early, with a `nextCursor` at the last
    /// reminder examined, instead of scanning all of them in one loop turn.
    static let maximumExaminedPerPage = 5000

    /// One page of `list` at `now`: the reminders matching `filter` after `cursor`, in `order`
    /// (key order — id, then recipient — or next-fire order). A reminder whose firing is held
    /// ahead of its due instant reads as pending (``reported(_:_:at:)``).
    func list(
        _ filter: ReminderFilter, includeInactive: Bool, limit: Int?, cursor: PageCursor?, order: ListOrder = .id,
        for client: ClientAddress? = nil, at now: Date
    ) -> ControlOutcome {
        let pageSize: Int
        do throws(WireError) {
            pageSize = try PageSize.checked(limit)
        } catch {
            return .failed(error)
        }
        var walk = ListingWalk(
            filter: filter, includeInactive: includeInactive, pageSize: pageSize, client: client,
            isRestricted: isServingRestricted)
        let nextCursor: String?
        switch order {
        case .id:
            let after: ReminderKey?
            do throws(WireError) {
                after = try cursor.map { cursor throws(WireError) in
                    // A cursor of an earlier version holds a bare id: the page goes on after it.
                    guard let key = ReminderKey(storage: try Self.textKey(of: cursor)) else { throw Self.invalidCursor }
                    return key
                }
            } catch {
                return .failed(error)
            }
            // Named ids without a recipient name every recipient's reminder of that id; a recipient
            // alone walks its own run of the recipient index (O(log N + its reminders), issue 42).
            let candidates: AnySequence<ReminderKey>
            if let ids = filter.ids {
                candidates = durable.keys(named: Array(Set(ids)).sorted(), of: filter.recipient, after: after)
            } else if let recipient = filter.recipient {
                candidates = AnySequence(entries.byRecipient.keys(of: recipient, after: after))
            } else {
                candidates = AnySequence(reminderIndex.keys(after: after))
            }
            var lastExamined: ReminderKey?
            for key in candidates {
                guard walk.examines(key, in: self, at: now) else { break }
                lastExamined = key
            }
            nextCursor = walk.isComplete ? nil : lastExamined.map { PageCursor(kind: .list, text: $0.storage).text }
        case .nextFire:
            let after: NextFireKey?
            do throws(WireError) {
                after = try cursor.map { cursor throws(WireError) in
                    guard cursor.kind == .listByNextFire, let place = NextFireKey(cursorBytes: cursor.key) else {
                        throw Self.invalidCursor
                    }
                    return place
                }
            } catch {
                return .failed(error)
            }
            // Every reminder is on the next-fire index; a filter's ids and recipient are
            // checked on the way (a selective one ends its page early, as a match does).
            let named = filter.ids.map(Set.init)
            var lastExamined: NextFireKey?
            for place in entries.byNextFire.keys(after: after) {
                if let named, !named.contains(place.key.id) {
                    guard walk.skips() else { break }
                    lastExamined = place
                    continue
                }
                guard walk.examines(place.key, place: place, in: self, at: now) else { break }
                lastExamined = place
            }
            nextCursor = walk.isComplete ? nil : lastExamined.map { PageCursor(kind: .listByNextFire, key: $0.cursorBytes).text }
        }
        var page = walk.page
        // Held firings, looked up once for the page (one pass over the held firings), not
        // once per reminder listed.
        if durable.heldCount > 0 {
            let held = durable.heldListings(of: Set(walk.pageKeys))
            for index in page.indices { page[index].held = held[walk.pageKeys[index]] }
        }
        return .listed(ListingPage(
            items: page, total: cursor == nil && nextCursor == nil ? page.count : nil, nextCursor: nextCursor))
    }

    /// One `list` page being filled: what it holds and how much it examined.
    struct ListingWalk {
        let filter: ReminderFilter
        let includeInactive: Bool
        let pageSize: Int
        let client: ClientAddress?
        /// A handed-over slot's reminders are the target's to list; data of slots the map gave
        /// away outside a move is listed by no one.
        let isRestricted: Bool
        /// Only a userInfo match needs the reminder decoded; ids and recipient are on the key.
        let isMatching: Bool
        let budget: Int
        var page: [ListingPage.Item] = []
        var pageKeys: [ReminderKey] = []
        var examined = 0
        /// Whether the walk reached the end of its candidates (no next page).
        var isComplete = true

        init(filter: ReminderFilter, includeInactive: Bool, pageSize: Int, client: ClientAddress?, isRestricted: Bool) {
            self.filter = filter
            self.includeInactive = includeInactive
            self.pageSize = pageSize
            self.client = client
            self.isRestricted = isRestricted
            isMatching = !(filter.match?.isEmpty ?? true)
            budget = max(CoordinatorState.maximumExaminedPerPage, 2 * pageSize)
            page.reserveCapacity(min(pageSize, 1024))
        }

        /// Whether the page has room and budget for one more candidate (else it is not complete).
        private mutating func hasRoom() -> Bool {
            guard page.count < pageSize && examined < budget else {
                isComplete = false
                return false
            }
            examined += 1
            return true
        }

        /// Counts a candidate passed over without a look.
        /// - Returns: `false` when the page is full or its budget spent (the walk stops before it).
        mutating func skips() -> Bool { hasRoom() }

        /// Examines `key`, listing it when it matches.
        /// - Returns: `false` when the page is full or its budget spent (the walk stops before `key`).
        /// - Parameter place: its place in next-fire order, when the walk is in that order.
        mutating func examines(_ key: ReminderKey, place: NextFireKey? = nil, in state: CoordinatorState, at now: Date) -> Bool {
            guard hasRoom() else { return false }
            guard let entry = state.entries[key], client?.sees(entry.recipient) ?? true else { return true }
            if let recipient = filter.recipient, entry.recipient != recipient { return true }
            if isRestricted && !state.serves(entry.recipient) { return true }
            let reported = state.reported(key, entry, at: now)
            guard includeInactive || reported.state == .pending else { return true }
            if isMatching && !filter.matches(entry.reminder) { return true }
            var item = state.listingItem(of: entry, reported, key: key)
            item.nextFirePlace = place
            page.append(item)
            pageKeys.append(key)
            return true
        }
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
        // The log keeps the firings as made (keys, not text): resolved here as dispatch
        // resolved them, so a catch-up matches the live event.
        for index in selected.indices where selected[index].firing.content.hasLocalizableKeys {
            selected[index].firing = localized(selected[index].firing)
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
