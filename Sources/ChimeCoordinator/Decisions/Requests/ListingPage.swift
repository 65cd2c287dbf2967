import ChimeCore
import ChimeWire
import Foundation

/// One page of `list` as the coordinator's state decided it: each reminder still in its
/// binary form (`Reminder.binaryEncoded()`, shared with the state, not copied), with what the
/// state knows about it. Deciding the page is the loop's work, O(log N + page); decoding the
/// reminders (``result``) and encoding the reply are pure and run on the reply encoder's
/// thread (`ReplyEncoder`), so a page of 1,000 costs the loop a walk and no JSON.
public struct ListingPage: Sendable, Hashable {
    /// One reminder of the page.
    struct Item: Sendable, Hashable {
        let bytes: [UInt8]
        let state: ReminderState
        /// The next fire instant (UTC), for a pending reminder with an occurrence left.
        let nextFireAt: Date?
        let deliveredCount: Int
        let lastFiredAt: Date?
        let armed: Bool?
        let reason: String?
        /// The operator's remaining count, when one is set.
        var remaining: Int? = nil
        /// Why an operator switched it off, when a note was given.
        var note: String? = nil
        /// Its firings held in quiet hours, when it has any.
        var held: [HeldFiringListing]? = nil
        /// Its key, where a page cut short by `limits.maxReplyBytes` continues after it.
        var key: ReminderKey? = nil
        /// Its place in next-fire order, on a page of `list --order next-fire`, where a page
        /// cut short continues after it (instead of after ``key``).
        var nextFirePlace: NextFireKey? = nil
    }

    let items: [Item]
    /// How many matched in all, when this page holds every match (`ListResult.total`).
    public let total: Int?
    /// Where the next page starts (`ListResult.nextCursor`); `nil` on the last page.
    public let nextCursor: String?

    /// How many reminders the page holds.
    public var count: Int { items.count }

    /// The page's reminders, decoded (O(page)).
    public var reminders: [ReminderListing] { items.map(\.listing) }

    /// The page as the wire carries it.
    public var result: ListResult { ListResult(reminders: reminders, total: total, nextCursor: nextCursor) }
}

extension ListingPage.Item {
    /// The reminder as the wire lists it, decoded from its binary form.
    var listing: ReminderListing {
        ReminderListing(
            reminder: CoordinatorState.Entry.decodeStored(bytes[...]), state: state, nextFireAt: nextFireAt,
            deliveredCount: deliveredCount, lastFiredAt: lastFiredAt, armed: armed, reason: reason, remaining: remaining,
            note: note, held: held)
    }
}
