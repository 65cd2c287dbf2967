import ChimeCore
import ChimeTestSupport
import Testing

/// The selection in `LatenessRecorder.summary()` gives exactly the nearest-rank figures a sort does.
@Suite struct LatenessRecorderTests {
    /// count, p50, p99, max by a sort (nearest rank).
    static func sortedFigures(_ samples: [Double]) -> [Double] {
        let sorted = samples.sorted()
        func rank(_ p: Double) -> Double {
            sorted[max(0, min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1))]
        }
        return [Double(sorted.count), rank(0.5), rank(0.99), sorted[sorted.count - 1]]
    }

    static func figures(_ summary: LatenessSummary?) -> [Double]? {
        summary.map { [Double($0.count), $0.p50, $0.p99, $0.max] }
    }

    @Test(arguments: [1, 2, 3, 7, 99, 100, 101, 1000, 4096])
    func selectionAgreesWithASort(count: Int) {
        var random = SeededRandomNumberGenerator(seed: UInt64(count) &* 7919)
        for shape in 0..<4 {
            let samples: [Double] = (0..<count).map { index in
                switch shape {
                case 0: Double(Int.random(in: -50...5_000, using: &random))
                case 1: Double(Int.random(in: 0...3, using: &random))  // many duplicates
                case 2: Double(index)  // already sorted
                default: Double(count - index) * 0.25  // reversed
                }
            }
            var recorder = LatenessRecorder(capacity: 10_000)
            for sample in samples { recorder.record(milliseconds: sample) }
            #expect(Self.figures(recorder.summary()) == Self.sortedFigures(samples), "shape \(shape), \(count) samples")
        }
    }

    @Test func aRingPastItsCapacityKeepsTheNewest() {
        var recorder = LatenessRecorder(capacity: 3)
        for sample in [100.0, 1, 2, 3] { recorder.record(milliseconds: sample) }
        #expect(Self.figures(recorder.summary()) == [3, 2, 3, 3])
        #expect(recorder.totalCount == 4)
        #expect(LatenessRecorder().summary() == nil)
    }
}
