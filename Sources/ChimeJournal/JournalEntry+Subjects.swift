import ChimeCore
import ChimeStore
import Foundation

/// What a journal entry is about, by id: so a report of damage can say which reminders,
/// firings, recipients and requests a lost record touched.
public struct JournalSubjects: Hashable, Sendable {
    /// Reminders, by key (text `<recipient>/<id>`).
    public var reminders: Set<ReminderKey> = []
    /// Firing ids (`<reminder>@<instant>`), sorted by text.
    public var firings: Set<FiringID> = []
    /// Recipients whose settings or badge the entry set.
    public var recipients: Set<RecipientID> = []
    /// The `requestId`s of answered requests (a retry of one of them is applied anew).
    public var requests: Set<String> = []

    /// Nothing.
    public init() {}

    /// Whether no id is named.
    public var isEmpty: Bool { reminders.isEmpty && firings.isEmpty && recipients.isEmpty && requests.isEmpty }

    /// Adds every id of `other`.
    public mutating func formUnion(_ other: JournalSubjects) {
        reminders.formUnion(other.reminders)
        firings.formUnion(other.firings)
        recipients.formUnion(other.recipients)
        requests.formUnion(other.requests)
    }

    /// The kinds of id, in the order a report of damage names them.
    public enum Kind {
        /// Reminder keys, as text.
        public static let reminders = RecordSubjects.Kind(name: "reminders")
        /// Firing ids, as text.
        public static let firings = RecordSubjects.Kind(name: "firings")
        /// Recipient ids.
        public static let recipients = RecordSubjects.Kind(name: "recipients")
        /// The `requestId`s of answered requests.
        public static let requests = RecordSubjects.Kind(name: "requests", label: "requests (a retry is applied anew)")
        /// All four, in order.
        public static let all = [reminders, firings, recipients, requests]
    }

    /// The ids as text, for the store's reports.
    public var recordSubjects: RecordSubjects {
        var subjects = RecordSubjects(kinds: Kind.all)
        subjects.insert(reminders.map(\.text), as: Kind.reminders)
        subjects.insert(firings.map(\.text), as: Kind.firings)
        subjects.insert(recipients.map(\.rawValue), as: Kind.recipients)
        subjects.insert(requests, as: Kind.requests)
        return subjects
    }
}

extension JournalEntry {
    /// The reminders, firings, recipients and requests this entry is about (a firing's
    /// reminder included).
    public var subjects: JournalSubjects {
        var subjects = JournalSubjects()
        func firing(_ id: FiringID) {
            subjects.firings.insert(id)
            subjects.reminders.insert(id.key)
        }
        switch self {
        case .scheduled(let reminder, _): subjects.reminders.insert(reminder.key)
        case .cancelled(let ids, _), .switched(let ids, _, _): subjects.reminders.formUnion(ids)
        case .fired(let reminder, let dueAt, _, _, _, _): firing(FiringID(reminder, dueAt: dueAt))
        case .skipped(let reminder, _, _, _), .suppressed(let reminder, _, _, _, _): subjects.reminders.insert(reminder)
        case .nagFired(let id, _), .leaseExpired(let id, _), .deadLettered(let id, _), .retried(let id, _),
            .handled(let id, _, _):
            firing(id)
        case .acknowledged(let id, _, _, _): firing(id)
        case .deadLetterDeleted(let id, _), .deliveryFailed(let id, _, _): firing(id)
        case .deliveredRemoved(let recipient, let id, _):
            firing(id)
            subjects.recipients.insert(recipient)
        case .registered(let recipient, _): subjects.recipients.insert(recipient.id)
        case .badgeSet(let recipient, _, _): subjects.recipients.insert(recipient)
        case .acted(let job, _): firing(job.firingId)
        case .answered(let requestId, _, _, _): subjects.requests.insert(requestId)
        case .trigger(let fact):
            subjects.reminders.formUnion(fact.reminders)
            subjects.firings.formUnion(fact.firings)
            subjects.recipients.formUnion(fact.recipients)
        case .attention(let fact):
            subjects.reminders.formUnion(fact.reminders)
            subjects.firings.formUnion(fact.firings)
        case .actionFinished, .jobLeaseExpired, .seqReserved, .started, .slotMove: break
        }
        return subjects
    }
}
