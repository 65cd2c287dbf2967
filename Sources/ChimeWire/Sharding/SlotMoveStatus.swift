import ChimeCore
import Foundation

/// How a move a shard took part in ended there.
public enum SlotMoveEnding: String, Codable, Hashable, Sendable {
    /// Source: aborted, the slots kept.
    case resumed
    /// Source: committed, the copy deleted.
    case released
    /// Target: committed and released by the source.
    case completed
    /// Target: aborted, the staging dropped.
    case dropped
}

/// What a shard answers every step of the `move` op: its view after the step, the facts a
/// mover decides on (all of them durable on the shard when the answer leaves).
///
/// JSON shape: `{"shard": 2, "mapEpoch": 3, "registerVersion": 7, "reminders": 10000,
/// "ledger": {"outgoing": [{"move": {…}, "cut": "…"}], "incoming": [{"move": {…}, "cut": "…",
/// "isCommitted": false}], "ended": {"m0": "completed"}}, "slotReminders": {"m1": 120},
/// "slotUnsettled": {"m1": 0}, "shipment": {"slice": "<base64>", "cut": "…"}}`; instants are
/// RFC 3339 UTC, `registerVersion`, `cut` and `shipment` only when there is one.
public struct SlotMoveStatus: Codable, Hashable, Sendable {
    /// A move the shard sends.
    public struct Outgoing: Codable, Hashable, Sendable {
        /// The move.
        public var move: SlotMove
        /// The cut-over instant (UTC), once handed over.
        public var cut: Date?
        /// Whether the slots were handed over.
        public var isHandedOver: Bool { cut != nil }

        /// Creates the value from its fields.
        public init(move: SlotMove, cut: Date? = nil) {
            self.move = move
            self.cut = cut
        }
    }

    /// A move the shard receives.
    public struct Incoming: Codable, Hashable, Sendable {
        /// The move.
        public var move: SlotMove
        /// The cut-over instant (UTC), once the slice was adopted.
        public var cut: Date?
        /// Whether the register committed the move and the shard recorded it.
        public var isCommitted: Bool
        /// Whether the slice was adopted (durable here).
        public var isAdopted: Bool { cut != nil }

        /// Creates the value from its fields.
        public init(move: SlotMove, cut: Date? = nil, isCommitted: Bool = false) {
            self.move = move
            self.cut = cut
            self.isCommitted = isCommitted
        }
    }

    /// The shard's move ledger, as a mover reads it: the moves in progress in id order and
    /// how the ended ones ended (slices and hand-over events left out).
    public struct Ledger: Codable, Hashable, Sendable {
        /// Moves sent.
        public var outgoing: [Outgoing]
        /// Moves received.
        public var incoming: [Incoming]
        /// How each ended move ended, by move id.
        public var ended: [String: SlotMoveEnding]

        /// Creates the value from its fields.
        public init(outgoing: [Outgoing] = [], incoming: [Incoming] = [], ended: [String: SlotMoveEnding] = [:]) {
            self.outgoing = outgoing
            self.incoming = incoming
            self.ended = ended
        }
    }

    /// The shard's id.
    public var shard: Int
    /// The map epoch it serves under.
    public var mapEpoch: UInt64
    /// The register version it read last (`nil`: no register).
    public var registerVersion: UInt64?
    /// Reminders it holds (any state).
    public var reminders: Int
    /// Its move ledger.
    public var ledger: Ledger
    /// Per move (by id): reminders of the move's slots here (the source's copy, or the
    /// target's adopted slice); only when the request asked (`countReminders`).
    public var slotReminders: [String: Int]
    /// Per move (by id): firings of the move's slots unsettled here.
    public var slotUnsettled: [String: Int]
    /// `export`: the shipment, once the source can cut it.
    public var shipment: ShippedSlice?

    /// Creates the value from its fields (see each property for meaning).
    public init(
        shard: Int, mapEpoch: UInt64, registerVersion: UInt64? = nil, reminders: Int, ledger: Ledger = Ledger(),
        slotReminders: [String: Int] = [:], slotUnsettled: [String: Int] = [:], shipment: ShippedSlice? = nil
    ) {
        self.shard = shard
        self.mapEpoch = mapEpoch
        self.registerVersion = registerVersion
        self.reminders = reminders
        self.ledger = ledger
        self.slotReminders = slotReminders
        self.slotUnsettled = slotUnsettled
        self.shipment = shipment
    }
}
