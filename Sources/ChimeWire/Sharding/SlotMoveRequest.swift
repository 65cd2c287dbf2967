import ChimeCore
import Foundation

/// The steps a mover asks of a shard (`step` of the `move` op). Every answer is sent only once
/// every entry the shard journaled before it is durable, and a shard whose store cannot be
/// written (full) refuses every step with `store_full`: a mover never acts on a fact that a
/// crash could take back.
public enum SlotMoveStep: String, Codable, Sendable, CaseIterable {
    /// The shard's ledger and reminder count (`countReminders` optional).
    case status
    /// `move`: the source journals `migrating`, the target `importing` (only while this
    /// shard's read of the map register has the move open; a target that still sends a move
    /// of any of the slots refuses with `unavailable` until it released them).
    case begin
    /// `moveId`, `pauseMs` (optional): the source refuses the slots' writes for that long and
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

    /// The request keys the step takes besides `op`, `requestId` and `step`, required first.
    public var argumentKeys: (required: [String], optional: [String]) {
        switch self {
        case .status: ([], ["countReminders"])
        case .begin: (["move"], [])
        case .pause: (["moveId"], ["pauseMs"])
        case .export, .follow: (["moveId"], [])
        case .import: (["moveId", "shipment"], [])
        }
    }
}

/// The slots' final slice as a source exports it (`export`'s answer) and a target imports it
/// (`import`'s argument).
///
/// JSON shape: `{"slice": "<base64>", "cut": "2026-12-05T05:20:34.120Z"}`. `slice` is the
/// slots' durable state in the coordinator's snapshot encoding: the data a move carries, kept
/// opaque (as a snapshot file is), not arguments of the step.
public struct ShippedSlice: Codable, Hashable, Sendable {
    /// The slice in the snapshot encoding (base64 in JSON).
    public var slice: Data
    /// The hand-over's cut-over instant (UTC, whole milliseconds on the wire): the source
    /// fired every occurrence of the slots due before it.
    public var cut: Date

    /// Creates the value from its fields.
    public init(slice: Data, cut: Date) {
        self.slice = slice
        self.cut = cut
    }

    private enum CodingKeys: String, CodingKey, CaseIterable { case slice, cut }

    /// Decodes `{"slice", "cut"}`, refusing any other key.
    /// - Throws: `DecodingError` for a missing, unknown or wrongly typed field (a `slice` that
    ///   is not base64, a `cut` that is not an RFC 3339 instant).
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        slice = try container.decode(Data.self, forKey: .slice)
        cut = try container.decode(Date.self, forKey: .cut)
    }
}

/// A `move` request: one step of a slot move that a mover (`chime shards move`) sends a
/// source or target shard (operator role only), with that step's arguments as typed fields,
/// flat in the request like every other op's.
///
/// JSON shapes (besides `"op": "move"` and `requestId`):
/// - `{"step": "status", "countReminders": true}` (`countReminders` optional)
/// - `{"step": "begin", "move": {"id": "m1", "slots": [3, 4], "source": 0, "target": 2, "slotCount": 4096}}`
/// - `{"step": "pause", "moveId": "m1", "pauseMs": 200}` (`pauseMs` optional, 1–60,000, default 200)
/// - `{"step": "export", "moveId": "m1"}`, `{"step": "follow", "moveId": "m1"}`
/// - `{"step": "import", "moveId": "m1", "shipment": {"slice": "<base64>", "cut": "…"}}`
///
/// A step given a key it does not take is refused (`unknown_field`), as is one without a key
/// it needs (`invalid_argument`). The answer to every step is a ``SlotMoveStatus``.
public struct SlotMoveRequest: Hashable, Sendable {
    /// The step.
    public var step: SlotMoveStep
    /// The move, for `begin`.
    public var move: SlotMove?
    /// The move's id, for every step but `status` and `begin`.
    public var moveId: SlotMoveID?
    /// For `pause`: how long the source refuses the slots' writes, in milliseconds
    /// (1…``maximumPauseMilliseconds``; the shard takes 200 when absent). JSON `"pauseMs"`.
    public var pauseMilliseconds: Int?
    /// For `import`: what the source exported.
    public var shipment: ShippedSlice?
    /// For `status`: whether the answer counts the reminders of each move's slots
    /// (`slotReminders`), a scan of every reminder, so a mover asks once. JSON `"countReminders"`.
    public var countsReminders: Bool

    /// The longest pause a request may ask for, in milliseconds.
    public static let maximumPauseMilliseconds = 60_000

    /// Creates the value from its fields (see each property for which step takes which).
    public init(
        step: SlotMoveStep, move: SlotMove? = nil, moveId: SlotMoveID? = nil, pauseMilliseconds: Int? = nil,
        shipment: ShippedSlice? = nil, countsReminders: Bool = false
    ) {
        self.step = step
        self.move = move
        self.moveId = moveId
        self.pauseMilliseconds = pauseMilliseconds
        self.shipment = shipment
        self.countsReminders = countsReminders
    }

    /// `status`, counting the moves' reminders when `countingReminders`.
    public static func status(countingReminders: Bool = false) -> SlotMoveRequest {
        SlotMoveRequest(step: .status, countsReminders: countingReminders)
    }
    /// `begin` of `move`.
    public static func begin(_ move: SlotMove) -> SlotMoveRequest { SlotMoveRequest(step: .begin, move: move) }
    /// `pause` of move `id` for `milliseconds` (clamped to 1…``maximumPauseMilliseconds``).
    public static func pause(_ id: SlotMoveID, milliseconds: Int) -> SlotMoveRequest {
        SlotMoveRequest(step: .pause, moveId: id, pauseMilliseconds: min(maximumPauseMilliseconds, max(1, milliseconds)))
    }
    /// `export` of move `id`.
    public static func export(_ id: SlotMoveID) -> SlotMoveRequest { SlotMoveRequest(step: .export, moveId: id) }
    /// `import` of `shipment` for move `id`.
    public static func `import`(_ id: SlotMoveID, _ shipment: ShippedSlice) -> SlotMoveRequest {
        SlotMoveRequest(step: .import, moveId: id, shipment: shipment)
    }
    /// `follow` of move `id`.
    public static func follow(_ id: SlotMoveID) -> SlotMoveRequest { SlotMoveRequest(step: .follow, moveId: id) }

    /// Every key a `move` request may carry besides `op` and `requestId`.
    public static let argumentKeys = ["step"] + CodingKeys.allCases.map(\.stringValue).filter { $0 != "step" }

    private enum CodingKeys: String, CodingKey, CaseIterable { case step, move, moveId, pauseMs, shipment, countReminders }
}

extension SlotMoveRequest: Codable {
    /// Decodes the step and its arguments from the request object (flat beside `op`).
    /// - Throws: `WireError` `.invalidArgument` for an unknown step, a missing argument or a
    ///   value out of range, `.unknownField` for a key the step does not take; `DecodingError`
    ///   for a wrongly typed value (at its path).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let stepName = try container.decode(String.self, forKey: .step)
        guard let step = SlotMoveStep(rawValue: stepName) else {
            let known = SlotMoveStep.allCases.map(\.rawValue).joined(separator: ", ")
            throw WireError(.invalidArgument, "unknown move step \"\(stepName)\"; expected one of \(known)", field: "step")
        }
        let (required, optional) = step.argumentKeys
        for key in container.allKeys where key != .step && !(required + optional).contains(key.stringValue) {
            throw WireError(.unknownField, "the move step \"\(step.rawValue)\" does not take \"\(key.stringValue)\"", field: key.stringValue)
        }
        for key in required where !container.allKeys.contains(where: { $0.stringValue == key }) {
            throw WireError(.invalidArgument, "the move step \"\(step.rawValue)\" needs \"\(key)\"", field: key)
        }
        self.step = step
        move = container.contains(.move) ? try SlotMove.decodeChecked(from: container.superDecoder(forKey: .move), field: "move") : nil
        moveId = try container.decodeIfPresent(SlotMoveID.self, forKey: .moveId)
        if let moveId, moveId.rawValue.isEmpty || moveId.rawValue.utf8.count > SlotMoveID.maximumLength {
            throw WireError(.invalidArgument, "moveId must be 1 to \(SlotMoveID.maximumLength) bytes", field: "moveId")
        }
        pauseMilliseconds = try container.decodeNumberIfPresent(Int.self, forKey: .pauseMs, expected: "a whole number of milliseconds")
        if let pauseMilliseconds, !(1...Self.maximumPauseMilliseconds).contains(pauseMilliseconds) {
            throw WireError(
                .invalidArgument, "pauseMs must be between 1 and \(Self.maximumPauseMilliseconds) milliseconds, not \(pauseMilliseconds)",
                field: "pauseMs")
        }
        shipment = try container.decodeIfPresent(ShippedSlice.self, forKey: .shipment)
        countsReminders = try container.decodeIfPresent(Bool.self, forKey: .countReminders) ?? false
    }

    /// Encodes the step and the arguments it has, flat beside `op`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(step, forKey: .step)
        try container.encodeIfPresent(move, forKey: .move)
        try container.encodeIfPresent(moveId, forKey: .moveId)
        try container.encodeIfPresent(pauseMilliseconds, forKey: .pauseMs)
        try container.encodeIfPresent(shipment, forKey: .shipment)
        if countsReminders { try container.encode(true, forKey: .countReminders) }
    }
}
