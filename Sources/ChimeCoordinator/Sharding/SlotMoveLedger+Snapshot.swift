import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

extension SlotMoveLedger {
    /// The snapshot form of the ledger (the `moves` part of a format-5 snapshot header, and
    /// without slices the ledger a `move` step's answer shows): the moves in id order, each
    /// incoming move's adopted slice as a nested snapshot payload. (Records of earlier
    /// versions also hold `appliedThrough`, `heldForSource` and `handedOverThrough`, of a
    /// journal-tail protocol that was never shipped: ignored.)
    public struct Record: Codable, Sendable {
        /// One incoming move.
        public struct IncomingRecord: Codable, Sendable {
            /// The move.
            public var move: SlotMove
            /// The adopted slice in the snapshot encoding (base64 in the JSON), until the commit
            /// (left out of a step's answer).
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

    /// The ledger a step's answer shows (`record` without slices): an adopted move shows as
    /// adopted, with an empty slice.
    /// - Throws: `WireError(.invalidArgument)` for a record that names a move twice.
    public static func viewed(_ record: Record) throws(WireError) -> SlotMoveLedger {
        var stripped = record
        for index in stripped.incoming.indices { stripped.incoming[index].slice = nil }
        var ledger = try SlotMoveLedger(stripped, settings: CoordinatorConfiguration().durableSettings)
        for (id, move) in ledger.incoming where move.cut != nil && !move.isCommitted {
            ledger.incoming[id]?.slice = DurableState(settings: CoordinatorConfiguration().durableSettings)
        }
        return ledger
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
