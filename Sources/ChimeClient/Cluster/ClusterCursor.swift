import ChimeCore
import ChimeWire
import Foundation

/// Where the next page of a listing merged across shards starts: one position per shard.
///
/// Wire form (the `nextCursor` a multi-shard `chime list` prints; clients pass it back
/// unchanged): base64url without padding (RFC 4648 §5) of
/// `0x53 ('S')`, the listing's `PageCursor.Kind` byte, the map epoch (LEB128), the count of
/// positions (LEB128, 1…``maximumShards``), then per position the shard id (LEB128), a state
/// byte (0: from the start, 1: after a key, 2: done) and, for state 1, the key's length
/// (LEB128) and bytes — the key of the shard's own `PageCursor`. A single-shard cluster
/// keeps the coordinator's cursor (its first byte is the kind, never `S`).
public struct ClusterCursor: Hashable, Sendable {
    /// One shard's position.
    public enum Position: Hashable, Sendable {
        /// Nothing listed yet.
        case start
        /// Continue after this key (a `PageCursor` key of the listing's kind).
        case after([UInt8])
        /// Every item listed.
        case done
    }

    /// The listing it continues.
    public var kind: PageCursor.Kind
    /// The map epoch the cursor was made under (informational: a newer map still reads it).
    public var mapEpoch: UInt64
    /// Each shard's position, by shard id.
    public var positions: [Int: Position]

    /// The first byte of the wire form.
    static let marker: UInt8 = 0x53
    /// The most shards a cursor names.
    public static let maximumShards = 4096
    /// The most characters a cursor may have.
    public static let maximumTextLength = 1 << 20

    /// Creates the value from its fields (see each property for meaning).
    public init(kind: PageCursor.Kind, mapEpoch: UInt64, positions: [Int: Position]) {
        self.kind = kind
        self.mapEpoch = mapEpoch
        self.positions = positions
    }

    /// Whether every shard is done (no next page).
    public var isFinished: Bool { positions.values.allSatisfy { $0 == .done } }

    /// The shard's own cursor for its next page (`nil`: from the start or done).
    public func shardCursor(_ shard: Int) -> PageCursor? {
        guard case .after(let key) = positions[shard] ?? .start else { return nil }
        return PageCursor(kind: kind, key: key)
    }

    /// The wire form.
    public var text: String {
        var writer = ByteWriter(capacity: 16)
        writer.writeByte(Self.marker)
        writer.writeByte(kind.rawValue)
        writer.writeVarint(mapEpoch)
        writer.writeVarint(UInt64(positions.count))
        for (shard, position) in positions.sorted(by: { $0.key < $1.key }) {
            writer.writeVarint(UInt64(max(0, shard)))
            switch position {
            case .start: writer.writeByte(0)
            case .after(let key):
                writer.writeByte(1)
                writer.writeVarint(UInt64(key.count))
                key.withUnsafeBytes { writer.writeBytes($0) }
            case .done: writer.writeByte(2)
            }
        }
        return Base64URL.encoded(writer.bytes)
    }

    /// Whether `text` has the form of a cluster cursor (its first byte is `S`), so it is
    /// not a coordinator's own cursor.
    public static func isClusterCursor(_ text: String) -> Bool {
        // base64url of a first byte 0x53 starts with "U".
        text.hasPrefix("U")
    }

    /// Reads a cursor a client passed back.
    /// - Throws: `WireError` `.invalidArgument` (field `cursor`) when `text` is not base64url,
    ///   is too long, was made by another listing, is cut short, has bytes left over, names
    ///   a shard twice or too many shards.
    public init(text: String, expecting kind: PageCursor.Kind) throws(WireError) {
        func refuse(_ reason: String) -> WireError {
            WireError(.invalidArgument, "the cursor \(reason); pass back a nextCursor unchanged", field: "cursor")
        }
        guard text.utf8.count <= Self.maximumTextLength else { throw refuse("is too long") }
        guard let data = Base64URL.decoded(text) else { throw refuse("is not valid") }
        var reader = ByteReader(data[...])
        do {
            guard try reader.readByte() == Self.marker else { throw refuse("is not a cluster cursor") }
            guard try reader.readByte() == kind.rawValue else { throw refuse("belongs to another listing") }
            let epoch = try reader.readVarint()
            let count = try reader.readVarint()
            guard (1...UInt64(Self.maximumShards)).contains(count) else { throw refuse("names \(count) shards") }
            var positions: [Int: Position] = [:]
            for _ in 0..<count {
                let shard = try reader.readVarint()
                guard shard < UInt64(Self.maximumShards) else { throw refuse("names shard \(shard)") }
                let position: Position
                switch try reader.readByte() {
                case 0: position = .start
                case 1:
                    position = .after(Array(try reader.readBytes(.varint)))
                case 2: position = .done
                case let other: throw refuse("has an unknown position state \(other)")
                }
                guard positions.updateValue(position, forKey: Int(shard)) == nil else { throw refuse("names shard \(shard) twice") }
            }
            guard reader.isAtEnd else { throw refuse("has bytes left over") }
            self.init(kind: kind, mapEpoch: epoch, positions: positions)
        } catch let error as WireError {
            throw error
        } catch {
            throw refuse("is cut short or damaged (\(error))")
        }
    }
}
