/// The CRC-32C (Castagnoli) checksum that guards every journal record and snapshot.
///
/// Reflected polynomial `0x82F63B78` (normal form `0x1EDC6F41`), initial value and final
/// XOR `0xFFFFFFFF`, as in iSCSI (RFC 3720 §B.4) and ext4 metadata; the checksum of the
/// ASCII bytes `123456789` is `0xE3069283`. Computed table-driven, eight bytes per step
/// ("slicing-by-8", Intel's Kounavis and Berry, 2005).
///
/// ```swift
/// var crc = CRC32C()
/// crc.update(header)
/// crc.update(payload)
/// let checksum = crc.value
/// ```
public struct CRC32C: Sendable {
    private var state: UInt32 = 0xFFFF_FFFF

    /// Starts a checksum over no bytes.
    public init() {}

    /// The checksum of every byte passed to `update` so far.
    public var value: UInt32 { ~state }

    /// The checksum of `bytes`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32C()
        crc.update(bytes)
        return crc.value
    }

    /// The checksum of `bytes`.
    public static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
        var crc = CRC32C()
        crc.update(bytes)
        return crc.value
    }

    /// Adds `bytes` to the checksum.
    public mutating func update(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { update($0) } }
    }

    /// Adds `bytes` to the checksum.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var cursor = bytes.baseAddress, !bytes.isEmpty else { return }
        var remaining = bytes.count
        var crc = state
        Self.table.withUnsafeBufferPointer { table in
            while remaining >= 8 {
                let low = UInt32(littleEndian: cursor.loadUnaligned(as: UInt32.self)) ^ crc
                let high = UInt32(littleEndian: cursor.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
                crc =
                    table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ table[1 * 256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
                cursor += 8
                remaining -= 8
            }
            while remaining > 0 {
                crc = table[Int((crc ^ UInt32(cursor.load(as: UInt8.self))) & 0xFF)] ^ (crc >> 8)
                cursor += 1
                remaining -= 1
            }
        }
        state = crc
    }

    /// Eight 256-entry tables: `table[k * 256 + b]` is the CRC of byte `b` followed by `k`
    /// zero bytes.
    private static let table: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            table[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = table[(slice - 1) * 256 + byte]
                table[slice * 256 + byte] = (previous >> 8) ^ table[Int(previous & 0xFF)]
            }
        }
        return table
    }()
}
