import Foundation

/// How many of a page's items one reply may carry so that its encoded bytes stay within
/// `limits.maxReplyBytes` (issue 37, item 1): a page that would pass the bound ends early
/// with a continuation cursor after its last item, so it is shorter, never wrong. One item
/// larger than the bound is still sent alone, so every page makes progress.
///
/// The work is bounded by the bound, not by the page: items are measured one at a time and
/// the first one that does not fit ends the measuring, so a `list` of 10,000 large reminders
/// encodes about `maxBytes` of JSON, not the whole page.
enum ReplyBudget {
    /// The number of leading items that fit, at least one when there is one.
    ///
    /// Item `i` fits when the reply without items (`emptyBytes`), the items before it and
    /// itself (each `itemBytes(i)`, with a comma between items) and the cursor member that
    /// would continue after it (`continuationBytes(i)`) take at most `maxBytes`. The sum is
    /// an upper bound of the cut reply (a cut drops `total` and fewer hand-overs), so a
    /// caller checks the encoded reply and shortens it by one item when the guess was low.
    /// - Parameters:
    ///   - itemCount: the page's items.
    ///   - maxBytes: the bound, in bytes.
    ///   - emptyBytes: the encoded reply with no item, in bytes.
    ///   - itemBytes: item `i`'s encoded bytes; called in increasing `i`, never beyond the
    ///     first item that does not fit.
    ///   - continuationBytes: the bytes `"nextCursor":"…"` and its comma take after item `i`.
    static func fittingCount(
        itemCount: Int, maxBytes: Int, emptyBytes: Int, itemBytes: (Int) -> Int, continuationBytes: (Int) -> Int
    ) -> Int {
        var used = emptyBytes
        for index in 0..<max(0, itemCount) {
            let withItem = used + itemBytes(index) + (index > 0 ? 1 : 0)
            if index > 0 && withItem + continuationBytes(index) > maxBytes { return index }
            used = withItem
        }
        return max(0, itemCount)
    }

    /// The encoded reply within `maxBytes` (or one item alone, when that item passes it).
    /// - Parameters:
    ///   - encode: the reply with the first `count` items; `isCut`: ending with a cursor
    ///     after the last of them (and without `total`), else the page as decided.
    ///   - Others: as ``fittingCount(itemCount:maxBytes:emptyBytes:itemBytes:continuationBytes:)``.
    static func encode(
        itemCount: Int, maxBytes: Int, emptyBytes: () -> Int, itemBytes: (Int) -> Int, continuationBytes: (Int) -> Int,
        encode: (_ count: Int, _ isCut: Bool) -> Data
    ) -> Data {
        guard itemCount > 1, maxBytes < Int.max else { return encode(itemCount, false) }
        var count = fittingCount(
            itemCount: itemCount, maxBytes: maxBytes, emptyBytes: emptyBytes(), itemBytes: itemBytes,
            continuationBytes: continuationBytes)
        if count == itemCount {
            let whole = encode(itemCount, false)
            if whole.count <= maxBytes { return whole }
            count -= 1
        }
        var reply = encode(count, true)
        while reply.count > maxBytes && count > 1 {
            count -= 1
            reply = encode(count, true)
        }
        return reply
    }

    /// The bytes `"nextCursor":"<cursor>",` add to a JSON object (a cursor is base64url text:
    /// nothing in it is escaped).
    static func continuationBytes(cursor: String) -> Int { cursor.utf8.count + 16 }
}
