import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

/// The arguments of a slot-move step (`{"op": "move", "step", "body"}`, `body` being this
/// value's JSON): which fields a step reads is listed at ``SlotMoveStep``.
public struct SlotMoveCall: Codable, Sendable, Equatable {
    /// `begin`: the move.
    public var move: SlotMove?
    /// Every step but `begin` and `status`: the move's id.
    public var moveId: SlotMoveID?
    /// `pause`: how long the source refuses the slots' writes, in milliseconds (1…60,000).
    public var pauseMilliseconds: Int?
    /// `import`: what the source exported.
    public var shipment: SlotMoveShipment.Wire?
    /// Whether the answer counts the reminders of each move's slots (`slotReminders`): a
    /// scan of every reminder, so a mover asks once.
    public var countReminders: Bool?

    /// Creates the value from its fields.
    public init(
        move: SlotMove? = nil, moveId: SlotMoveID? = nil, pauseMilliseconds: Int? = nil, shipment: SlotMoveShipment.Wire? = nil,
        countReminders: Bool? = nil
    ) {
        self.move = move
        self.moveId = moveId
        self.pauseMilliseconds = pauseMilliseconds
        self.shipment = shipment
        self.countReminders = countReminders
    }
}

/// The steps a mover asks of a shard (`step` of the `move` op). Every answer is sent only once
/// every entry the shard journaled before it is durable, and a shard whose store cannot be
/// written (full) refuses every step with `store_full`: a mover never acts on a fact that a
/// crash could take back.
public enum SlotMoveStep: String, Sendable, CaseIterable {
    /// The shard's ledger and reminder count (no arguments).
    case status
    /// `move`: the source journals `migrating`, the target `importing` (only while this
    /// shard's read of the map register has the move open; a target that still sends a move
    /// of any of the slots refuses with `unavailable` until it released them).
    case begin
    /// `moveId`, `pauseMilliseconds`: the source refuses the slots' writes for that long and
    /// hands over when nothing of them is due before now.
    case pause
    /// `moveId`: the source's shipment (the slots' final slice with the cut), once handed
    /// over and nothing of the slots is unsettled there; none before.
    case export = "export"
    /// `moveId`, `shipment`: the target journals `adopted` with it.
    case `import` = "import"
    /// `moveId`: both shards follow the register's outcome (target `committed` and
    /// `completed`, or `dropped`; source `released`, or `resumed`), as each also does by
    /// itself when its read of the register shows the outcome.
    case follow
}

/// What a shard answers every step: its view after the step.
public struct SlotMoveStatus: Codable, Sendable {
    /// The shard's id.
    public var shard: Int
    /// The map epoch it serves under.
    public var mapEpoch: UInt64
    /// The register version it read last (`nil`: no register).
    public var registerVersion: UInt64?
    /// Reminders it holds (any state).
    public var reminders: Int
    /// Its move ledger (slices left out; see ``SlotMoveLedger/viewed(_:)``).
    public var ledger: SlotMoveLedger.Record
    /// Per move (by id): reminders of the move's slots here (the source's copy, or the
    /// target's adopted slice); only when the call asked (`countReminders`).
    public var slotReminders: [String: Int]
    /// Per move (by id): firings of the move's slots unsettled here.
    public var slotUnsettled: [String: Int]
    /// `export`: the shipment.
    public var shipment: SlotMoveShipment.Wire?
}

/// The answer to a `move` op: `body` is a ``SlotMoveStatus``'s JSON.
public struct MoveStepResult: Codable, Sendable, Hashable {
    /// The status's JSON (base64 in the reply).
    public var body: Data

    /// Creates the value from its field.
    public init(body: Data) { self.body = body }
}

extension SlotMoveShipment {
    /// A shipment on the wire: the slice in the snapshot encoding.
    public struct Wire: Codable, Sendable, Equatable {
        /// The move.
        public var moveId: SlotMoveID
        /// The slice's snapshot payload (base64 in JSON).
        public var slice: Data
        /// The hand-over's cut-over instant.
        public var cut: Date
    }

    /// The wire form (the slice encoded as a snapshot payload).
    public var wire: Wire { Wire(moveId: moveID, slice: slice.encodedSnapshot(takenAt: nil), cut: cut) }

    /// The shipment `wire` carries.
    /// - Throws: `WireError(.invalidArgument)` when the slice does not decode.
    public init(_ wire: Wire, settings: DurableSettings) throws(WireError) {
        self.init(moveID: wire.moveId, slice: try DurableState.decodeSnapshot(wire.slice, seed: settings).state, cut: wire.cut)
    }
}
