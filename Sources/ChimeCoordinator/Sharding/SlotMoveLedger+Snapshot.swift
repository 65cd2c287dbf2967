import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

extension SlotMoveLedger {
    /// The snapshot form of the ledger (the `moves` part of a format-5 snapshot header): the
    /// moves in id order, each incoming move's adopted slice as a nested snapshot payload. (Records of earlier
    /// versions also hold `appliedThrough`, `heldForSource` and `handedOverThrough`, of a
    /// journal-tail protocol that was never shipped: ignored.)
    public struct Record: Codable, Sendable {
        /// One incoming move.
        public struct IncomingRecord: Codable, Sendable {
            /// The move.
            public var move: SlotMove
            /// The adopted slice in the snapshot encoding (base64 in the JSON), until the commit.
            public var slice: Data?
            /// The cut-over instant, once adopted.
            public var cut: Date?
            /// Whether the commit was recorded.
            public var isCommitted: Bool
        }

        /// Moves sent.
        public var outgoing: [Outgoing]
        /// Moves received.
        public var incoming: [IncomingRecord]
        /// How each ended move ended, by id.
        public var ended: [String: Ending]
        /// The retained hand-over events, in `seq` order (absent: none; snapshots of earlier
        /// versions have none).
        public var handOvers: [HandOverEvent]?
    }

    /// The ledger a mover reads in a step's answer (``SlotMoveStatus/Ledger``): an adopted
    /// move shows as adopted, with an empty slice.
    /// - Throws: `WireError(.invalidArgument)` for a view that names a move twice.
    public static func viewed(_ view: SlotMoveStatus.Ledger) throws(WireError) -> SlotMoveLedger {
        let settings = CoordinatorConfiguration().durableSettings
        var ledger = SlotMoveLedger()
        for item in view.outgoing {
            guard ledger.outgoing.updateValue(Outgoing(move: item.move, cut: item.cut), forKey: item.move.id) == nil else {
                throw WireError(.invalidArgument, "the ledger shows outgoing \(item.move) twice")
            }
        }
        for item in view.incoming {
            var move = Incoming(move: item.move)
            move.cut = item.cut
            move.isCommitted = item.isCommitted
            if item.isAdopted && !item.isCommitted { move.slice = DurableState(settings: settings) }
            guard ledger.incoming.updateValue(move, forKey: item.move.id) == nil else {
                throw WireError(.invalidArgument, "the ledger shows incoming \(item.move) twice")
            }
        }
        for (id, ending) in view.ended { ledger.ended[SlotMoveID(id)] = ending }
        return ledger
    }

    /// The ledger as a step's answer shows it: the moves in id order, without slices.
    public var view: SlotMoveStatus.Ledger {
        SlotMoveStatus.Ledger(
            outgoing: outgoing.values.sorted { $0.move.id < $1.move.id }.map { SlotMoveStatus.Outgoing(move: $0.move, cut: $0.cut) },
            incoming: incoming.values.sorted { $0.move.id < $1.move.id }.map {
                SlotMoveStatus.Incoming(move: $0.move, cut: $0.cut, isCommitted: $0.isCommitted)
            },
            ended: Dictionary(uniqueKeysWithValues: ended.map { ($0.key.rawValue, $0.value) }))
    }

    /// Whether the ledger holds nothing (no move ever took part here): its snapshot leaves `moves` out.
    var isEmpty: Bool { isIdle && ended.isEmpty && handOvers.isEmpty }

    /// The snapshot form.
    public var record: Record {
        Record(
            outgoing: outgoing.values.sorted { $0.move.id < $1.move.id },
            incoming: incoming.values.sorted { $0.move.id < $1.move.id }.map {
                Record.IncomingRecord(
                    move: $0.move, slice: $0.slice?.encodedSnapshot(takenAt: nil), cut: $0.cut, isCommitted: $0.isCommitted)
            },
            ended: Dictionary(uniqueKeysWithValues: ended.map { ($0.key.rawValue, $0.value) }),
            handOvers: handOvers.isEmpty ? nil : handOvers)
    }

    /// The ledger a snapshot holds.
    /// - Throws: `WireError(.invalidArgument)` when an adopted slice does not decode, or a
    ///   move is recorded twice (a damaged snapshot).
    init(_ record: Record, settings: DurableSettings) throws(WireError) {
        self.init()
        for move in record.outgoing {
            guard outgoing.updateValue(move, forKey: move.move.id) == nil else {
                throw WireError(.invalidArgument, "the snapshot records outgoing \(move.move) twice")
            }
        }
        for item in record.incoming {
            var move = Incoming(move: item.move)
            if let slice = item.slice { move.slice = try DurableState.decodeSnapshot(slice, seed: settings).state }
            move.cut = item.cut
            move.isCommitted = item.isCommitted
            guard incoming.updateValue(move, forKey: item.move.id) == nil else {
                throw WireError(.invalidArgument, "the snapshot records incoming \(item.move) twice")
            }
        }
        for (id, ending) in record.ended { ended[SlotMoveID(id)] = ending }
        for event in record.handOvers ?? [] { retain(event) }
    }
}
