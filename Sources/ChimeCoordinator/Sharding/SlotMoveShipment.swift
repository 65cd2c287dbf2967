import ChimeCore
import ChimeJournal
import ChimeStore
import Foundation

/// A journal entry with its sequence number in the source's journal.
public struct SequencedEntry: Equatable, Sendable {
    /// Its position in the source's journal (1 is the first entry).
    public var seq: UInt64
    /// The entry.
    public var entry: JournalEntry

    /// Creates the value from its fields.
    public init(seq: UInt64, entry: JournalEntry) {
        self.seq = seq
        self.entry = entry
    }
}

/// What a source sends its target for one move: a slice of the slots when the target holds
/// nothing, the slots' entries after what the target holds, the hand-over once made, and
/// whether the source released the slots. Sent again unchanged after a loss: the target
/// takes only what follows what it holds.
public struct SlotMoveShipment: Equatable, Sendable {
    /// The hand-over: the cut-over instant (UTC) and the source's sequence it covers.
    public struct HandOver: Equatable, Sendable {
        /// The cut-over instant.
        public var cut: Date
        /// The source's journal sequence the hand-over covers.
        public var through: UInt64
    }

    /// The move.
    public var moveID: SlotMoveID
    /// The slots' slice of the source's durable state at sequence `after` (S0), when sent.
    public var slice: DurableState?
    /// The sequence the shipment continues from: the slice's, else what the target said it holds.
    public var after: UInt64
    /// The slots' entries after `after` through `through`, in order.
    public var entries: [SequencedEntry]
    /// The source's journal end when it shipped: everything about the slots through it is in
    /// the slice and `entries`.
    public var through: UInt64
    /// The hand-over, once made.
    public var handOver: HandOver?
    /// Whether the source released the slots (the move ended there).
    public var isReleased: Bool
}

/// What a target answers each shipment (and a mover's status query) for one move.
public struct SlotMoveReceipt: Equatable, Sendable, Codable {
    /// The move.
    public var moveID: SlotMoveID
    /// The source sequence through which the target holds the slots' data (staged or
    /// applied); `nil`: it holds nothing and needs a slice.
    public var through: UInt64?
    /// Whether it adopted the slice (durable from there).
    public var isAdopted: Bool
    /// Whether it recorded the commit.
    public var isCommitted: Bool
}

extension SlotMove {
    /// Whether a journal entry is about the move's slots (one of the recipients, reminders
    /// or firings it names is on them): the entries the source ships after the slice. An
    /// entry naming recipients on other slots as well is shipped whole; folded into the
    /// slots' data it changes only theirs.
    public func isAbout(_ entry: JournalEntry) -> Bool {
        switch entry {
        case .started, .seqReserved, .answered(_, _, _, nil), .slotMove: return false
        case .answered(_, _, _, .some(let recipient)): return covers(recipient)
        default:
            let subjects = entry.subjects
            return subjects.recipients.contains(where: covers) || subjects.reminders.contains { covers($0.recipient) }
                || subjects.firings.contains { covers($0.recipient) }
        }
    }
}
