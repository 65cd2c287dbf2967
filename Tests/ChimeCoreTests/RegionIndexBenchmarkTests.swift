import ChimeCore
import Foundation
import Testing

/// What a location report costs with n regions indexed: the index's candidates for the
/// point plus the exact distance to each (what `DurableState.crossings` does per report),
/// against measuring every region. One recipient holding all n regions is the worst case
/// (a query reads one recipient's cells); regions are a city block to a district (50 m–2 km)
/// scattered over Europe (35–70°N, 10°W–40°E), half the reports at a region's centre and
/// half anywhere in the box. CI runs 1k and 10k;
/// `CHIME_LONG_TESTS=1` adds 100k and 1M and prints the figures for Benchmarks/README.md.
@Suite struct RegionIndexBenchmarkTests {
    static var sizes: [Int] {
        ProcessInfo.processInfo.environment["CHIME_LONG_TESTS"] == "1" ? [1_000, 10_000, 100_000, 1_000_000] : [1_000, 10_000]
    }

    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
    }

    @Test func aReportCostsTheCellsItReadsNotTheRegionsIndexed() {
        var perReport: [(Int, Double, Double)] = []
        for count in Self.sizes {
            var random = Generator(state: UInt64(count))
            var index = RegionIndex<String, Int>()
            var regions: [(GeoPoint, Double)] = []
            regions.reserveCapacity(count)
            for key in 0..<count {
                let center = GeoPoint(
                    latitude: Double.random(in: 35...70, using: &random), longitude: Double.random(in: -10...40, using: &random))
                let radius = pow(10, Double.random(in: 1.7...3.3, using: &random))
                regions.append((center, radius))
                index.insert(key, in: "fleet", center: center, radius: radius)
            }
            let reports = (0..<2_000).map { number in
                number % 2 == 0
                    ? regions[Int.random(in: 0..<count, using: &random)].0
                    : GeoPoint(latitude: Double.random(in: 35...70, using: &random), longitude: Double.random(in: -10...40, using: &random))
            }
            var hits = 0
            let started = Date()
            for point in reports {
                for key in index.candidates(near: point, in: "fleet") where regions[key].0.distance(to: point) <= regions[key].1 {
                    hits += 1
                }
            }
            let indexed = Date().timeIntervalSince(started) / Double(reports.count)
            // The same reports measured against every region (a few, at the larger sizes).
            let scanned = min(reports.count, max(5, 2_000_000 / count))
            var scanHits = 0
            let scanStarted = Date()
            for point in reports.prefix(scanned) {
                for region in regions where region.0.distance(to: point) <= region.1 { scanHits += 1 }
            }
            let linear = Date().timeIntervalSince(scanStarted) / Double(scanned)
            var indexedHits = 0
            for point in reports.prefix(scanned) {
                for key in index.candidates(near: point, in: "fleet") where regions[key].0.distance(to: point) <= regions[key].1 {
                    indexedHits += 1
                }
            }
            #expect(indexedHits == scanHits, "the index finds what a scan finds (\(count) regions)")
            perReport.append((count, indexed * 1e6, linear * 1e6))
            print(String(format: "region index: %d regions, %.1f µs a report indexed (%.1f holding the point on average), %.0f µs scanning every region", count, indexed * 1e6, Double(hits) / Double(reports.count), linear * 1e6))
        }
        // Ten times the regions costs far less than ten times the time per report.
        if let small = perReport.first, let large = perReport.last, large.0 >= 10 * small.0 {
            #expect(large.1 < small.1 * Double(large.0 / small.0) / 3)
        }
    }
}
