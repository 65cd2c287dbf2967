import Foundation
import Testing

@testable import ChimeBench

/// The peer run's pure parts: the child's ingest-times file and the records tail.
struct PeerSchedulerTests {
    @Test func readsTheIngestTimes() throws {
        let times = try #require(PeerScheduler.parseIngested("1764700000.125000 1764700001.500000\n"))
        #expect(times.start == 1_764_700_000.125)
        #expect(times.end == 1_764_700_001.5)
    }

    @Test(arguments: ["", "\n", "1.0", "1.0 2.0 3.0", "2.0 1.0", "nan 1.0", "1.0 inf", "a b", "1.0,2.0", "\u{0} \u{FF}"])
    func refusesIngestTimesThatAreNotTwoOrderedNumbers(_ text: String) {
        #expect(PeerScheduler.parseIngested(text) == nil)
    }

    @Test func peersRunTheWorkloadsWithoutACrash() {
        #expect(PeerScheduler.workloads == [.w1, .w2])
        #expect(PeerScheduler.apscheduler.rawValue == "apscheduler")
    }

    /// A line split across two reads is counted once it is whole; ids outside the plan and
    /// malformed lines are not counted.
    @Test func theTailCountsWholeLinesOnly() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]); close(descriptors[1]) }
        _ = fcntl(descriptors[0], F_SETFL, fcntl(descriptors[0], F_GETFL) | O_NONBLOCK)
        let progress = ObservationProgress()
        let tracker = RecordsTracker(count: 3, progress: progress)
        var tail = RecordsTail()
        func write(_ text: String) { _ = text.utf8CString.withUnsafeBufferPointer { Glibc.write(descriptors[1], $0.baseAddress, text.utf8.count) } }
        let readEmpty = tail.read(descriptors[0], into: tracker)
        #expect(!readEmpty)
        write("0 10.000000 10.001000\n1 10.000000 10.0")
        let readFirst = tail.read(descriptors[0], into: tracker)
        #expect(readFirst)
        #expect(progress.records == 1)
        write("02000\n7 10.000000 10.003000\nnot a line\n0 10.000000 10.004000\n")
        let readSecond = tail.read(descriptors[0], into: tracker)
        #expect(readSecond)
        #expect(progress.records == 3, "ids 0, 1 and 0 again; 7 is outside the plan")
        #expect(progress.distinct == 2)
        #expect(progress.allSeenAt == nil)
        write("2 10.000000 10.005000\n")
        tail.read(descriptors[0], into: tracker)
        #expect(progress.distinct == 3)
        #expect(progress.allSeenAt == 10.005)
    }
}
