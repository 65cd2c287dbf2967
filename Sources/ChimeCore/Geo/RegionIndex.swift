import Foundation

/// Circular regions indexed for "which regions may contain this point": a hierarchical grid of
/// latitude/longitude cells (level `l` cuts latitude into 2^l rows of 180/2^l degrees and
/// longitude into 2^l columns of 360/2^l degrees). A region is filed under the cells of the
/// finest level whose cell is at least as tall and wide as its bounding box, so it touches at
/// most 2 × 2 of them; a query looks up the point's cell at each level in use (at most 25, one
/// hash lookup each) and returns the regions filed there: O(levels + k), independent of how
/// many regions are indexed elsewhere. Regions near a pole or wider than half the globe file
/// under level 0's one cell. Partitioned (by recipient, in the coordinator): a query reads one
/// partition's cells only.
///
/// Candidates may lie outside the point (a cell is coarser than a circle): the caller measures
/// the distance. Derived data: rebuilt from the regions, never stored.
public struct RegionIndex<Partition: Hashable & Sendable, Key: Hashable & Sendable>: Sendable {
    struct Cell: Hashable, Sendable {
        var partition: Partition
        var level: UInt8
        var row: Int32
        var column: Int32
    }

    private var cells: [Cell: [Key]] = [:]
    private var filed: [Key: (partition: Partition, cells: [Cell])] = [:]
    /// Per partition, how many regions each level holds (bit set ⇔ non-zero).
    private var levels: [Partition: [Int32]] = [:]

    /// The finest level used, cells of about 5 m.
    public static var finestLevel: Int { 22 }

    /// An empty index.
    public init() {}

    /// How many regions it holds.
    public var count: Int { filed.count }

    /// Files `key`'s region (centre, radius in metres) under `partition`, replacing an earlier
    /// filing of `key`.
    public mutating func insert(_ key: Key, in partition: Partition, center: GeoPoint, radius: Double) {
        remove(key)
        let level = Self.level(for: center, radius: radius)
        var cellsOfKey: [Cell] = []
        for (row, column) in Self.cells(of: center, radius: radius, level: level) {
            let cell = Cell(partition: partition, level: UInt8(level), row: row, column: column)
            cells[cell, default: []].append(key)
            cellsOfKey.append(cell)
        }
        filed[key] = (partition, cellsOfKey)
        var counts = levels[partition] ?? Array(repeating: 0, count: Self.finestLevel + 1)
        counts[level] += 1
        levels[partition] = counts
    }

    /// Removes `key`'s region.
    public mutating func remove(_ key: Key) {
        guard let (partition, cellsOfKey) = filed.removeValue(forKey: key) else { return }
        for cell in cellsOfKey {
            cells[cell]?.removeAll { $0 == key }
            if cells[cell]?.isEmpty ?? false { cells[cell] = nil }
        }
        if let level = cellsOfKey.first.map({ Int($0.level) }), var counts = levels[partition] {
            counts[level] -= 1
            levels[partition] = counts.allSatisfy { $0 == 0 } ? nil : counts
        }
    }

    /// The regions of `partition` whose cells hold `point` (a superset of those containing it).
    public func candidates(near point: GeoPoint, in partition: Partition) -> [Key] {
        guard let counts = levels[partition] else { return [] }
        var found: [Key] = []
        for level in 0...Self.finestLevel where counts[level] > 0 {
            let (row, column) = Self.cell(of: point, level: level)
            if let keys = cells[Cell(partition: partition, level: UInt8(level), row: row, column: column)] {
                found.append(contentsOf: keys)
            }
        }
        return found
    }

    /// The finest level whose cells are at least as large as the region's bounding box; 0 for
    /// one touching a pole or spanning more than 180° of longitude.
    static func level(for center: GeoPoint, radius: Double) -> Int {
        let (height, width) = boxSize(center, radius)
        guard height.isFinite, width.isFinite, width < 180, abs(center.latitude) + height / 2 < 90 else { return 0 }
        var level = 0
        while level < finestLevel, 180 / Double(1 << (level + 1)) >= height, 360 / Double(1 << (level + 1)) >= width {
            level += 1
        }
        return level
    }

    /// The bounding box's height and width in degrees.
    static func boxSize(_ center: GeoPoint, _ radius: Double) -> (height: Double, width: Double) {
        let height = 2 * radius / Geodesy.meanRadius * 180 / .pi * 1.01
        let highest = min(89.999, abs(center.latitude) + height / 2)
        let width = height / cos(highest * .pi / 180)
        return (height, width)
    }

    static func cell(of point: GeoPoint, level: Int) -> (Int32, Int32) {
        let divisions = Double(1 << level)
        let row = Int32(max(0, min(divisions - 1, ((point.latitude + 90) / 180 * divisions).rounded(.down))))
        var column = Int32(((point.longitude + 180) / 360 * divisions).rounded(.down))
        column = ((column % Int32(divisions)) + Int32(divisions)) % Int32(divisions)
        return (row, column)
    }

    static func cells(of center: GeoPoint, radius: Double, level: Int) -> [(Int32, Int32)] {
        guard level > 0 else { return [(0, 0)] }
        let (height, width) = boxSize(center, radius)
        let low = cell(of: GeoPoint(latitude: max(-90, center.latitude - height / 2), longitude: center.longitude - width / 2), level: level)
        let high = cell(of: GeoPoint(latitude: min(90, center.latitude + height / 2), longitude: center.longitude + width / 2), level: level)
        var result: [(Int32, Int32)] = []
        let divisions = Int32(1 << level)
        var columns: [Int32] = [low.1]
        if high.1 != low.1 { columns.append(high.1) }
        for row in low.0...high.0 {
            for column in columns where !result.contains(where: { $0 == (row, column) }) { result.append((row, column % divisions)) }
        }
        return result
    }
}
