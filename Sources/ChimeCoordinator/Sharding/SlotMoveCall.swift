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
    /// `release`: what the target answered last.
    public var receipt: SlotMoveReceipt?
    /// Whether the answer counts the reminders of each move's slots (`slotReminders`): a
    /// scan of every reminder, so a mover asks once.
    public var countReminders: Bool?
    /// `export`: answer with no shipment unless it carries the hand-over (the target already
    /// holds a slice, so only the final one moves the move on). Decided before the slice is
    /// cut, so a mover waiting for the slots' firings to settle costs the source nothing.
    public var finalOnly: Bool?

    /// Creates the value from its fields.
    public init(
        move: SlotMove? = nil, moveId: SlotMoveID? = nil, pauseMilliseconds: Int? = nil, shipment: SlotMoveShipment.Wire? = nil,
        receipt: SlotMoveReceipt? = nil, countReminders: Bool? = nil, finalOnly: Bool? = nil
    ) {
        self.move = move
        self.moveId = moveId
        self.pauseMilliseconds = pauseMilliseconds
        self.shipment = shipment
        self.receipt = receipt
        self.countReminders = countReminders
        self.finalOnly = finalOnly
    }
}

/// The steps a mover asks of a shard (`step` of the `move` op).
public enum SlotMoveStep: String, Sendable, CaseIterable {
    /// The shard's ledger and reminder count (no arguments).
    case status
    /// `move`: the source journals `migrating`, the target `importing` (only while this
    /// shard's read of the map register has the move open).
    case begin
    /// `moveId`, `pauseMilliseconds`: the source refuses the slots' writes for that long and
    /// hands over when nothing of them is due before now.
    case pause
    /// `moveId`, `finalOnly`: the source's shipment (the slots' slice now; the hand-over once
    /// made and nothing of the slots is unsettled there); none with `finalOnly` until it can
    /// carry the hand-over.
    case export = "export"
    /// `moveId`, `shipment`: the target stages it and adopts once it carries the hand-over.
    case `import` = "import"
    /// `moveId`: both shards follow the register's outcome (`committed`/`dropped` on the
    /// target, `resumed` on the source after an abort).
    case follow
    /// `moveId`, `receipt`: the source releases (deletes its copy) once the register
    /// committed, the target recorded it and nothing of the slots is unsettled here.
    case release
    /// `moveId`: the target completes the move the source released.
    case complete
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
    /// Per incoming move: how far it holds the source's data.
    public var receipts: [SlotMoveReceipt]
    /// Per move (by id): reminders of the move's slots here (the source's copy, or the
    /// target's staged slice); only when the call asked (`countReminders`).
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
        /// The slice's snapshot payload (base64 in JSON), when sent.
        public var slice: Data?
        /// As ``SlotMoveShipment/after``.
        public var after: UInt64
        /// As ``SlotMoveShipment/through``.
        public var through: UInt64
        /// The hand-over's cut-over instant, once made.
        public var cut: Date?
        /// The hand-over's sequence, once made.
        public var handOverThrough: UInt64?
        /// Whether the source released the slots.
        public var isReleased: Bool
    }

    /// The wire form (the slice encoded as a snapshot payload).
    public var wire: Wire {
        Wire(
            moveId: moveID, slice: slice?.encodedSnapshot(takenAt: nil), after: after, through: through, cut: handOver?.cut,
            handOverThrough: handOver?.through, isReleased: isReleased)
    }

    /// The shipment `wire` carries (entries are not sent on the wire: slices only).
    /// - Throws: `WireError(.invalidArgument)` when the slice does not decode.
    public init(_ wire: Wire, settings: DurableSettings) throws(WireError) {
        let slice = try wire.slice.map { data throws(WireError) in try DurableState.decodeSnapshot(data, seed: settings).state }
        var handOver: HandOver?
        if let cut = wire.cut, let through = wire.handOverThrough { handOver = HandOver(cut: cut, through: through) }
        self.init(
            moveID: wire.moveId, slice: slice, after: wire.after, entries: [], through: wire.through, handOver: handOver,
            isReleased: wire.isReleased)
    }
}
