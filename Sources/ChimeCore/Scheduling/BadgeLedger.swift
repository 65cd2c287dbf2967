import Foundation

/// One delivered, not yet handled firing in a recipient's delivered list (what an app sees
/// in `getDeliveredNotifications` when it opens).
///
/// JSON shape: `{"firingId", "reminderId", "dueAt", "firedAt", "title", "counted",
/// "collapseKey"}`, instants in RFC 3339 UTC; `title` and `collapseKey` are omitted when the
/// firing had none.
public struct DeliveredFiring: Codable, Hashable, Sendable {
    /// The firing's id (never a nag id; nags share their firing's entry).
    public var firingId: FiringID
    /// The reminder it belongs to.
    public var reminderId: ReminderID
    /// When the occurrence was due (UTC).
    public var dueAt: Date
    /// When it was delivered (UTC).
    public var firedAt: Date
    /// The delivered alert title, if any.
    public var title: String?
    /// Whether it was delivered with `badge: "+1"` and so counts toward the badge
    /// (JSON key `counted`).
    public var countsTowardBadge: Bool
    /// The firing's collapse key: a later delivery with the same key takes it off the list.
    public var collapseKey: String?

    /// Creates an entry.
    public init(
        firingId: FiringID, reminderId: ReminderID, dueAt: Date, firedAt: Date, title: String?,
        countsTowardBadge: Bool, collapseKey: String? = nil
    ) {
        self.firingId = firingId
        self.reminderId = reminderId
        self.dueAt = dueAt
        self.firedAt = firedAt
        self.title = title
        self.countsTowardBadge = countsTowardBadge
        self.collapseKey = collapseKey
    }

    private enum CodingKeys: String, CodingKey {
        case firingId, reminderId, dueAt, firedAt, title
        case countsTowardBadge = "counted"
        case collapseKey
    }
}

extension DeliveredFiring {
    /// The bytes of its JSON form as a snapshot stores it: 144 for the keys, the two RFC 3339
    /// instants and the firing id's (145 when not `counted`), plus the recipient, twice the
    /// reminder id, and the title and collapse key with their keys, each string as escaped
    /// (``jsonEscapedLength(_:)``). What a restricted key's byte quota counts for each firing
    /// its recipients' delivered lists hold (issue 37 item 3).
    public var storedBytes: Int {
        (countsTowardBadge ? 144 : 145) + jsonEscapedLength(firingId.recipient.rawValue) + 2 * jsonEscapedLength(reminderId.rawValue)
            + (title.map { 11 + jsonEscapedLength($0) } ?? 0) + (collapseKey.map { 17 + jsonEscapedLength($0) } ?? 0)
    }
}

/// The bytes of `text` inside a JSON string as Foundation's `JSONEncoder` writes it (UTF-8,
/// slashes not escaped): `"` and `\` take 2, the control characters U+0008, U+0009, U+000A,
/// U+000C and U+000D take 2 (`\b`, `\t`, `\n`, `\f`, `\r`), the other ones below U+0020 take
/// 6 (`\u00XX`), every other byte 1 (RFC 8259 §7). A title of control characters is 6 times
/// its UTF-8 length, which a count of UTF-8 bytes would miss.
func jsonEscapedLength(_ text: String) -> Int {
    var length = 0
    for byte in text.utf8 {
        switch byte {
        case 0x22, 0x5C, 0x08, 0x09, 0x0A, 0x0C, 0x0D: length += 2
        case 0x00..<0x20: length += 6
        default: length += 1
        }
    }
    return length
}

/// The result of one badge rule: the badge number afterwards and whether it changed.
///
/// The coordinator publishes one `badge.<recipient>` event with ``badge`` exactly when
/// ``isChanged`` is true, in the order the calls were made.
public struct BadgeUpdate: Hashable, Sendable {
    /// The badge number after the call, ≥ 0.
    public var badge: Int
    /// Whether the call changed the number.
    public var isChanged: Bool

    /// Creates an update.
    public init(badge: Int, isChanged: Bool) {
        self.badge = badge
        self.isChanged = isChanged
    }
}

/// A recipient's badge number and delivered list, with the rules of
/// `applicationIconBadgeNumber` plus Chime's relative mode.
///
/// The rules:
/// - one badge number, starting at 0 and never negative;
/// - delivery (``onDelivered(_:at:badge:)``) puts the firing in the delivered list by its
///   delivery instant, newest first (acks of concurrent deliveries can arrive out of that
///   order, so a late ack goes after the newer ones), and applies its change: `set(n)`
///   makes the badge n when n > 0, leaves it when n = 0, makes it 0 when n < 0 (iOS);
///   `increment` (`"+1"`) adds one;
/// - handling (``onHandled(_:)``: any action, or an ack) takes a listed firing off the
///   list and subtracts one, whatever its mode, never below 0; handling a firing that is
///   not listed (handled before, removed, cleared) changes nothing, so repeats are harmless;
/// - ``setBadge(_:)`` (`chime badge R N`): N > 0 sets N and keeps the list; N ≤ 0 sets 0 and
///   empties the list;
/// - a firing leaving the list unhandled (``removeDelivered(_:)``, or the oldest entry
///   dropped beyond ``deliveredLimit``) subtracts one only when it was delivered with
///   `"+1"`, so a `"+1"` badge never counts a firing nobody can see; absolute badges stay,
///   as `removeDeliveredNotifications` leaves them on iOS;
/// - a delivery whose content says `unhandled: replace` first takes its reminder's listed
///   firings off the list, and one with a `collapseKey` the listed firings with the same key
///   (APNs and FCM collapse), each leaving unhandled as above; so a `"+1"` reminder that
///   replaces counts once however many of its occurrences go unhandled.
///
/// With only `"+1"` reminders the badge therefore equals the length of the delivered list;
/// an absolute `set(n)` overrides that count until later deliveries and handlings move it
/// again from n. Delivering an id that is already listed (a redelivery) changes nothing.
///
/// JSON shape: `{"badge": 3, "delivered": [DeliveredFiring, …]}`, newest first.
/// ``deliveredLimit`` is configuration and not encoded. Each call costs O(n) for the
/// n ≤ ``deliveredLimit`` listed firings (a scan by firing id, or dropping the oldest).
public struct BadgeLedger: Hashable, Sendable {
    /// The default bound on the delivered list.
    public static let defaultDeliveredLimit = 1000

    /// The badge number, ≥ 0.
    public private(set) var badge: Int
    /// The delivered list, oldest first from `head` by `firedAt` (ties in delivery order), so
    /// delivery appends (or inserts a few places back, for a late ack) and dropping the
    /// oldest only moves `head` (amortized O(1); shifting a 1,000-entry array on every
    /// delivery was a tenth of the coordinator's time in a burst).
    private var deliveredOldestFirst: [DeliveredFiring]
    private var head = 0
    /// The ids in the list, so the common case (a new firing, not listed) costs O(1).
    private var listedIDs: Set<FiringID> = []
    /// The ``DeliveredFiring/storedBytes`` of the listed firings together, kept as the list
    /// changes (O(1) a change): what a restricted key's byte quota counts for the list.
    public private(set) var storedBytes = 0
    /// The most entries the delivered list keeps; the oldest go first.
    public let deliveredLimit: Int

    /// Creates a ledger.
    /// - Parameters:
    ///   - badge: the starting badge number; negative values become 0.
    ///   - delivered: the delivered list, newest first; entries beyond `deliveredLimit` are dropped.
    ///   - deliveredLimit: the most entries kept, at least 1.
    public init(badge: Int = 0, delivered: [DeliveredFiring] = [], deliveredLimit: Int = defaultDeliveredLimit) {
        precondition(deliveredLimit >= 1, "BadgeLedger needs a delivered limit of at least 1")
        self.badge = max(badge, 0)
        self.deliveredLimit = deliveredLimit
        self.deliveredOldestFirst = Array(delivered.prefix(deliveredLimit).reversed())
        self.listedIDs = Set(deliveredOldestFirst.map(\.firingId))
        self.storedBytes = deliveredOldestFirst.reduce(0) { $0 + $1.storedBytes }
    }

    /// The delivered, not yet handled firings, newest first.
    public var delivered: [DeliveredFiring] {
        deliveredOldestFirst[head...].reversed()
    }

    /// Whether `firingId` (or the firing a nag id belongs to) is in the delivered list.
    public func isDelivered(_ firingId: FiringID) -> Bool {
        index(of: firingId) != nil
    }

    /// Records the delivery of `firing` at `firedAt` and applies `badge`.
    ///
    /// Pass the firing as delivered (content stripped by ``DeliveryPlan``) and its delivered
    /// badge change; a nag or an already listed id changes nothing.
    @discardableResult
    public mutating func onDelivered(_ firing: Firing, at firedAt: Date, badge change: BadgeChange?) -> BadgeUpdate {
        // Not a nag, so the id is its own nag base: one hash both asks and lists it.
        guard !firing.firingId.isNag, listedIDs.insert(firing.firingId).inserted else { return unchanged }
        // Most firings stack and carry no collapse key: nothing to look for then.
        var newBadge = firing.content.unhandled == .replace || firing.content.collapseKey != nil
            ? removeReplaced(by: firing) : badge
        let entry = DeliveredFiring(
            firingId: firing.firingId, reminderId: firing.reminderId, dueAt: firing.dueAt, firedAt: firedAt,
            title: firing.content.title, countsTowardBadge: change == .increment, collapseKey: firing.content.collapseKey)
        // Acks reach the coordinator in the order workers send them, not always in the order
        // they delivered: walk back past the (usually zero, else few) newer entries.
        var slot = deliveredOldestFirst.endIndex
        while slot > head, deliveredOldestFirst[slot - 1].firedAt > firedAt { slot -= 1 }
        if slot == deliveredOldestFirst.endIndex {
            deliveredOldestFirst.append(entry)
        } else {
            deliveredOldestFirst.insert(entry, at: slot)
        }
        storedBytes += entry.storedBytes
        newBadge = change?.applied(to: newBadge) ?? newBadge
        if deliveredOldestFirst.count - head > deliveredLimit {
            let dropped = deliveredOldestFirst[head]
            head += 1
            listedIDs.remove(dropped.firingId)
            storedBytes -= dropped.storedBytes
            if dropped.countsTowardBadge { newBadge = max(newBadge - 1, 0) }
            if head >= deliveredLimit {
                deliveredOldestFirst.removeFirst(head)
                head = 0
            }
        }
        return update(to: newBadge)
    }

    /// Records that `firingId` (or, for a nag id, its firing) was handled: any action or
    /// an ack. A listed firing leaves the list and the badge falls by one, never below 0.
    @discardableResult
    public mutating func onHandled(_ firingId: FiringID) -> BadgeUpdate {
        guard let position = index(of: firingId) else { return unchanged }
        let handled = deliveredOldestFirst.remove(at: position)
        listedIDs.remove(handled.firingId)
        storedBytes -= handled.storedBytes
        return update(to: max(badge - 1, 0))
    }

    /// Sets the badge as `chime badge RECIPIENT N` does: N > 0 sets it; N ≤ 0 sets 0 and
    /// clears the delivered list.
    @discardableResult
    public mutating func setBadge(_ number: Int) -> BadgeUpdate {
        guard number > 0 else {
            deliveredOldestFirst.removeAll()
            head = 0
            listedIDs.removeAll()
            storedBytes = 0
            return update(to: 0)
        }
        return update(to: number)
    }

    /// Takes `firingId` off the delivered list without handling it; the badge falls by one
    /// only when the firing was delivered with `"+1"`.
    @discardableResult
    public mutating func removeDelivered(_ firingId: FiringID) -> BadgeUpdate {
        guard let position = index(of: firingId) else { return unchanged }
        let removed = deliveredOldestFirst.remove(at: position)
        listedIDs.remove(removed.firingId)
        storedBytes -= removed.storedBytes
        return update(to: removed.countsTowardBadge ? max(badge - 1, 0) : badge)
    }

    /// Whether a firing of `reminder` is listed (delivered and not handled). O(n).
    public func lists(reminder: ReminderID) -> Bool {
        deliveredOldestFirst[head...].contains { $0.reminderId == reminder }
    }

    /// Takes off the list what `firing` replaces (its reminder's firings under `.replace`, the
    /// firings with its collapse key); returns the badge less one per `"+1"` firing taken.
    private mutating func removeReplaced(by firing: Firing) -> Int {
        let replacesReminder = firing.content.unhandled == .replace
        let key = firing.content.collapseKey
        var newBadge = badge
        var index = head
        while index < deliveredOldestFirst.count {
            let listed = deliveredOldestFirst[index]
            guard (replacesReminder && listed.reminderId == firing.reminderId) || (key != nil && listed.collapseKey == key) else {
                index += 1
                continue
            }
            deliveredOldestFirst.remove(at: index)
            listedIDs.remove(listed.firingId)
            storedBytes -= listed.storedBytes
            if listed.countsTowardBadge { newBadge = max(newBadge - 1, 0) }
        }
        return newBadge
    }

    private var unchanged: BadgeUpdate { BadgeUpdate(badge: badge, isChanged: false) }

    private mutating func update(to newBadge: Int) -> BadgeUpdate {
        defer { badge = newBadge }
        return BadgeUpdate(badge: newBadge, isChanged: newBadge != badge)
    }

    private func index(of firingId: FiringID) -> Int? {
        let listed = firingId.nagBase
        guard listedIDs.contains(listed) else { return nil }
        return deliveredOldestFirst[head...].lastIndex { $0.firingId == listed }
    }

    /// Equal when badge, limit and the delivered list are (however the list is stored;
    /// ``storedBytes`` follows from the list).
    public static func == (lhs: BadgeLedger, rhs: BadgeLedger) -> Bool {
        lhs.badge == rhs.badge && lhs.deliveredLimit == rhs.deliveredLimit
            && lhs.deliveredOldestFirst[lhs.head...].elementsEqual(rhs.deliveredOldestFirst[rhs.head...])
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(badge)
        hasher.combine(deliveredLimit)
        for entry in deliveredOldestFirst[head...] { hasher.combine(entry) }
    }
}

extension BadgeLedger: Codable {
    private enum CodingKeys: String, CodingKey {
        case badge, delivered
    }

    /// Decodes `{"badge", "delivered"}` with the default ``deliveredLimit``.
    /// - Throws: `DecodingError` for a missing or malformed field.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            badge: try container.decode(Int.self, forKey: .badge),
            delivered: try container.decodeIfPresent([DeliveredFiring].self, forKey: .delivered) ?? [])
    }

    /// Encodes `{"badge", "delivered"}`, the list newest first.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(badge, forKey: .badge)
        try container.encode(delivered, forKey: .delivered)
    }
}
