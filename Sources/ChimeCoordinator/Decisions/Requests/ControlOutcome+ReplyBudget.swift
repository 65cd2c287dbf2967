import ChimeCore
import ChimeWire
import Foundation

extension ControlOutcome {
    /// The reply to send for this outcome, a page (`list`, `deadLetters`, `events`) ending
    /// early with its continuation cursor once its encoded bytes would pass `maxPageBytes`
    /// (``ReplyBudget``; `limits.maxReplyBytes`): a cut `list` page has no `total`, a cut
    /// `events` page is `truncated` with `through` at its last event. Any other outcome, and
    /// a page within the bound, encodes as ``encodedReply(requestId:)`` does.
    /// - Parameter maxPageBytes: the bound, in bytes; one item larger than it is sent alone.
    public func encodedReply(requestId: String?, maxPageBytes: Int) -> Data {
        switch self {
        case .listed(let page): return page.encodedReply(requestId: requestId, maxBytes: maxPageBytes)
        case .deadLetters(let result): return result.encodedReply(requestId: requestId, maxBytes: maxPageBytes)
        case .events(let result): return result.encodedReply(requestId: requestId, maxBytes: maxPageBytes)
        case .delivered(let result): return result.encodedReply(requestId: requestId, maxBytes: maxPageBytes)
        default: return encodedReply(requestId: requestId)
        }
    }
}

extension ListingPage {
    /// This page's reply within `maxBytes` (see ``ControlOutcome/encodedReply(requestId:maxPageBytes:)``):
    /// reminders are decoded only as far as they are measured.
    func encodedReply(requestId: String?, maxBytes: Int) -> Data {
        let codec = WireCodec()
        var listings: [ReminderListing] = []
        func listing(_ index: Int) -> ReminderListing {
            while listings.count <= index { listings.append(items[listings.count].listing) }
            return listings[index]
        }
        func cursor(after index: Int) -> String? {
            // A next-fire page continues in its own order (a key cursor would restart it in id order).
            if let place = items[index].nextFirePlace { return PageCursor(kind: .listByNextFire, key: place.cursorBytes).text }
            return items[index].key.map { PageCursor(kind: .list, text: $0.storage).text }
        }
        return ReplyBudget.encode(
            itemCount: items.count, maxBytes: maxBytes,
            emptyBytes: { codec.encode(ControlReply(requestId: requestId, result: ListResult(reminders: [], total: total, nextCursor: nextCursor))).count },
            itemBytes: { codec.encode(listing($0)).count },
            // An item without a key (none today) cannot end a page: it counts as not fitting.
            continuationBytes: { cursor(after: $0).map(ReplyBudget.continuationBytes(cursor:)) ?? Int.max / 2 }
        ) { count, isCut in
            let reminders = (0..<count).map(listing)
            let result = isCut
                ? ListResult(reminders: reminders, total: nil, nextCursor: count > 0 ? cursor(after: count - 1) : nextCursor)
                : ListResult(reminders: reminders, total: total, nextCursor: nextCursor)
            return codec.encode(ControlReply(requestId: requestId, result: result))
        }
    }
}

extension DeadLettersResult {
    /// This page's reply within `maxBytes` (see ``ControlOutcome/encodedReply(requestId:maxPageBytes:)``).
    func encodedReply(requestId: String?, maxBytes: Int) -> Data {
        let codec = WireCodec()
        func cursor(after index: Int) -> String { PageCursor(kind: .deadLetters, text: firings[index].firingId.description).text }
        return ReplyBudget.encode(
            itemCount: firings.count, maxBytes: maxBytes,
            emptyBytes: { codec.encode(ControlReply(requestId: requestId, result: DeadLettersResult(firings: [], nextCursor: nextCursor))).count },
            itemBytes: { index in
                let firing = firings[index]
                let failure = failures?[firing.firingId.description]
                // The firing and its failure entry (`"<id>":{…},`) in `failures`.
                return codec.encode(firing).count + (failure.map { codec.encode($0).count + firing.firingId.description.utf8.count + 4 } ?? 0)
            },
            continuationBytes: { ReplyBudget.continuationBytes(cursor: cursor(after: $0)) }
        ) { count, isCut in
            guard isCut else { return codec.encode(ControlReply(requestId: requestId, result: self)) }
            let kept = Array(firings.prefix(count))
            let keptIDs = Set(kept.map(\.firingId.description))
            let keptFailures = failures?.filter { keptIDs.contains($0.key) }
            let result = DeadLettersResult(
                firings: kept, nextCursor: count > 0 ? cursor(after: count - 1) : nextCursor,
                failures: keptFailures?.isEmpty ?? true ? nil : keptFailures)
            return codec.encode(ControlReply(requestId: requestId, result: result))
        }
    }
}

extension EventsResult {
    /// This page's reply within `maxBytes` (see ``ControlOutcome/encodedReply(requestId:maxPageBytes:)``):
    /// a cut page is `truncated`, settled `through` its last event, with the hand-overs up to it.
    func encodedReply(requestId: String?, maxBytes: Int) -> Data {
        let codec = WireCodec()
        func cursor(after index: Int) -> String { PageCursor(afterSeq: events[index].seq).text }
        return ReplyBudget.encode(
            itemCount: events.count, maxBytes: maxBytes,
            emptyBytes: {
                var empty = self
                empty.events = []
                return codec.encode(ControlReply(requestId: requestId, result: empty)).count
            },
            itemBytes: { codec.encode(events[$0]).count },
            continuationBytes: { ReplyBudget.continuationBytes(cursor: cursor(after: $0)) }
        ) { count, isCut in
            guard isCut, count > 0 else { return codec.encode(ControlReply(requestId: requestId, result: self)) }
            let last = events[count - 1].seq
            let through = min(self.through, last)
            let handOvers = self.handOvers?.filter { $0.seq <= through }
            let result = EventsResult(
                events: Array(events.prefix(count)), through: through, oldestRetained: oldestRetained, truncated: true,
                nextCursor: cursor(after: count - 1), handOvers: handOvers?.isEmpty ?? true ? nil : handOvers)
            return codec.encode(ControlReply(requestId: requestId, result: result))
        }
    }
}

extension DeliveredResult {
    /// This page's reply within `maxBytes` (see ``ControlOutcome/encodedReply(requestId:maxPageBytes:)``):
    /// a cut page ends with the cursor after its last firing.
    func encodedReply(requestId: String?, maxBytes: Int) -> Data {
        let codec = WireCodec()
        return ReplyBudget.encode(
            itemCount: delivered.count, maxBytes: maxBytes,
            emptyBytes: {
                codec.encode(ControlReply(requestId: requestId, result: DeliveredResult(recipient: recipient, badge: badge, delivered: []))).count
            },
            itemBytes: { codec.encode(delivered[$0]).count },
            continuationBytes: { ReplyBudget.continuationBytes(cursor: cursor(after: $0).text) }
        ) { count, isCut in
            guard isCut else { return codec.encode(ControlReply(requestId: requestId, result: self)) }
            var page = self
            page.delivered = Array(delivered.prefix(count))
            page.nextCursor = count > 0 ? cursor(after: count - 1).text : nextCursor
            return codec.encode(ControlReply(requestId: requestId, result: page))
        }
    }
}
