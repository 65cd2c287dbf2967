import ChimeCore
import Foundation

/// Which coordinator (shard) owns which recipients: a fixed table of slots and a small,
/// versioned map of slot ranges to shards.
///
/// A recipient's **slot** is `CRC-32C(UTF-8 bytes of the recipient id) mod slotCount`
/// (``slot(of:)``; CRC-32C as in RFC 3720 §B.4, the checksum the store uses, never Swift's
/// per-process seeded `Hasher`). `slotCount` is fixed when a cluster is created (4096 by
/// default; Redis Cluster uses 16384 slots the same way). Slots are metadata: a shard holds
/// no per-slot thread or queue. The map (`mapEpoch`, then each shard's id, its slot ranges and
/// its endpoints) says which shard owns each slot; every slot is owned by exactly one shard
/// (``validate()``), and a change of the map raises `mapEpoch`.
///
/// Everything about one recipient lives on its slot's shard, so every per-recipient rule
/// (caps, badges, delivered lists, zones, nags) stays a local fold.
///
/// JSON shape (the configuration's `cluster` section and the `map` reply):
/// `{"mapEpoch": 1, "slotCount": 4096, "shards": [{"id": 0, "slots": [[0, 2047]],
/// "endpoints": {"control": "tcp://…", "dispatch": …, "results": …, "events": …,
/// "eventsIngest": …}}, …]}`.
public struct ShardMap: Codable, Hashable, Sendable {
    /// One shard: a coordinator (with its own store, epoch, standby and ports).
    public struct Shard: Codable, Hashable, Sendable {
        /// The shard id (a Kubernetes StatefulSet ordinal).
        public var id: Int
        /// The slots it owns, as inclusive ranges `[first, last]`.
        public var slots: [SlotRange]
        /// Where its sockets are.
        public var endpoints: Endpoints

        /// Creates the value from its fields (see each property for meaning and units).
        public init(id: Int, slots: [SlotRange], endpoints: Endpoints) {
            self.id = id
            self.slots = slots
            self.endpoints = endpoints
        }
    }

    /// A shard's endpoints (the coordinator binds them; everyone else connects).
    public struct Endpoints: Codable, Hashable, Sendable {
        /// Control requests (ROUTER).
        public var control: String
        /// Firings to workers (ROUTER).
        public var dispatch: String
        /// Acknowledgements and heartbeats from workers (PULL).
        public var results: String
        /// Events to subscribers (XPUB).
        public var events: String
        /// Events from workers (XSUB).
        public var eventsIngest: String

        /// Creates the value from its fields (see each property for meaning and units).
        public init(control: String, dispatch: String, results: String, events: String, eventsIngest: String) {
            self.control = control
            self.dispatch = dispatch
            self.results = results
            self.events = events
            self.eventsIngest = eventsIngest
        }
    }

    /// An inclusive range of slots, `[first, last]` in JSON.
    public struct SlotRange: Codable, Hashable, Sendable {
        /// The first slot.
        public var first: Int
        /// The last slot (inclusive).
        public var last: Int

        /// Creates the value from its fields (see each property for meaning and units).
        public init(_ first: Int, _ last: Int) {
            self.first = first
            self.last = last
        }

        /// Decodes `[first, last]`.
        /// - Throws: `DecodingError` for anything but two integers.
        public init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            first = try container.decode(Int.self)
            last = try container.decode(Int.self)
            guard container.isAtEnd else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "a slot range is [first, last]")
            }
        }

        /// Encodes `[first, last]`.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(first)
            try container.encode(last)
        }
    }

    /// The default number of slots.
    public static let defaultSlotCount = 4096
    /// The most slots a cluster may have.
    public static let maximumSlotCount = 65_536

    /// The version of the map: raised by every change of slot ownership.
    public var mapEpoch: UInt64
    /// How many slots the cluster has (fixed when it is created).
    public var slotCount: Int
    /// The shards, in id order.
    public var shards: [Shard]

    /// Creates a map; call ``validate()`` before trusting it.
    public init(mapEpoch: UInt64, slotCount: Int = defaultSlotCount, shards: [Shard]) {
        self.mapEpoch = mapEpoch
        self.slotCount = slotCount
        self.shards = shards
    }

    /// The map of a single-shard cluster: shard 0 owns every slot (today's one coordinator).
    public static func single(_ endpoints: Endpoints, slotCount: Int = defaultSlotCount) -> ShardMap {
        ShardMap(mapEpoch: 1, slotCount: slotCount, shards: [Shard(id: 0, slots: [SlotRange(0, slotCount - 1)], endpoints: endpoints)])
    }

    /// The slot of `recipient`: CRC-32C of its UTF-8 bytes, modulo `slotCount`.
    public func slot(of recipient: RecipientID) -> Int { Self.slot(of: recipient, slotCount: slotCount) }

    /// The slot of `recipient` in a cluster of `slotCount` slots.
    public static func slot(of recipient: RecipientID, slotCount: Int) -> Int {
        var utf8 = recipient.rawValue
        let checksum = utf8.withUTF8 { CRC32C.checksum(UnsafeRawBufferPointer($0)) }
        return Int(checksum % UInt32(max(1, slotCount)))
    }

    /// The shard that owns `slot`, if any.
    public func shard(owning slot: Int) -> Shard? {
        shards.first { shard in shard.slots.contains { $0.first <= slot && slot <= $0.last } }
    }

    /// The shard that owns `recipient`'s slot, if any.
    public func shard(of recipient: RecipientID) -> Shard? { shard(owning: slot(of: recipient)) }

    /// The shard with id `id`, if any.
    public func shard(id: Int) -> Shard? { shards.first { $0.id == id } }

    /// Checks the map: a slot count in 1…65,536, at least one shard, shard ids unique and
    /// non-negative, every range within the slots and in order, and every slot owned by
    /// exactly one shard.
    /// - Throws: `WireError(.invalidArgument)` naming the first problem (the first slot left
    ///   unowned or owned twice, with its owners).
    public func validate() throws(WireError) {
        guard (1...Self.maximumSlotCount).contains(slotCount) else {
            throw WireError(.invalidArgument, "slotCount must be between 1 and \(Self.maximumSlotCount), not \(slotCount)", field: "slotCount")
        }
        guard !shards.isEmpty else { throw WireError(.invalidArgument, "the map names no shard", field: "shards") }
        var seen = Set<Int>()
        var owner = [Int?](repeating: nil, count: slotCount)
        for (index, shard) in shards.enumerated() {
            guard shard.id >= 0 else {
                throw WireError(.invalidArgument, "shard ids are 0 or more, not \(shard.id)", field: "shards[\(index)].id")
            }
            guard seen.insert(shard.id).inserted else {
                throw WireError(.invalidArgument, "shard \(shard.id) appears twice", field: "shards[\(index)].id")
            }
            for (rangeIndex, range) in shard.slots.enumerated() {
                let field = "shards[\(index)].slots[\(rangeIndex)]"
                guard range.first >= 0, range.last < slotCount, range.first <= range.last else {
                    throw WireError(
                        .invalidArgument, "slot range [\(range.first), \(range.last)] is not within 0…\(slotCount - 1)", field: field)
                }
                for slot in range.first...range.last {
                    if let other = owner[slot] {
                        throw WireError(.invalidArgument, "slot \(slot) is owned by shards \(other) and \(shard.id)", field: field)
                    }
                    owner[slot] = shard.id
                }
            }
        }
        if let unowned = owner.firstIndex(where: { $0 == nil }) {
            throw WireError(.invalidArgument, "slot \(unowned) is owned by no shard", field: "shards")
        }
    }

    /// Splits `slotCount` slots into `count` contiguous ranges of (nearly) equal size, one per
    /// shard `0..<count`, with `endpoints(id)` for each: the map `chime up --shards N` and a
    /// new cluster start with.
    public static func evenlySplit(
        shards count: Int, slotCount: Int = defaultSlotCount, endpoints: (Int) -> Endpoints
    ) -> ShardMap {
        let shards = (0..<max(1, count)).map { id in
            let first = id * slotCount / max(1, count)
            let last = (id + 1) * slotCount / max(1, count) - 1
            return Shard(id: id, slots: [SlotRange(first, last)], endpoints: endpoints(id))
        }
        return ShardMap(mapEpoch: 1, slotCount: slotCount, shards: shards)
    }
}
