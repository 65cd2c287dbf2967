import Foundation
import HelperThreads
import Synchronization

/// Samples the resident set size (VmRSS of `/proc/PID/status`) of the cluster's processes
/// every `interval` seconds on a thread of its own, summed per role, and keeps the peaks.
public final class RSSSampler: Sendable {
    /// Peak resident sizes in bytes: per role, and of the sum of both roles at one sample.
    public struct Peaks: Hashable, Sendable, Codable {
        /// Peak of the coordinators' summed resident sizes (one coordinator per shard).
        public var coordinator = 0
        /// Each coordinator's own peak, in the order of ``RSSSampler/setCoordinator(_:)``'s pids.
        public var coordinators: [Int] = []
        public var workers = 0
        public var total = 0
        /// Peak of the summed proportional set sizes (`Pss` of `/proc/PID/smaps_rollup`):
        /// pages shared by the processes (the `chime` binary, Swift runtime, Foundation,
        /// libzmq: about 22 MB each in RSS) counted once in all, not once per process.
        public var proportionalTotal = 0
    }

    private let coordinatorPIDs = Mutex<[Int32]>([])
    private let workerPIDs = Mutex<[Int32]>([])
    private let peaks = Mutex(Peaks())
    private let isStopped = Atomic<Bool>(false)
    private let thread = HelperThread(name: "chime-bench-rss")

    /// Starts sampling at once.
    /// - Parameter interval: seconds between samples (0.2 s in WORKLOADS.md).
    public init(interval: Double = 0.2) {
        thread.start { [self] in
            while !isStopped.load(ordering: .acquiring) {
                sample()
                Thread.sleep(forTimeInterval: interval)
            }
        }
    }

    /// Replaces the coordinators' pids (after a restart), one per shard in shard order; 0
    /// for a shard whose coordinator is not running.
    public func setCoordinator(_ pids: [Int32]) { coordinatorPIDs.withLock { $0 = pids } }
    /// Replaces the workers' pids (after a restart).
    public func setWorkers(_ pids: [Int32]) { workerPIDs.withLock { $0 = pids } }

    /// The peaks so far.
    public var currentPeaks: Peaks { peaks.withLock { $0 } }

    /// Takes one last sample, stops the thread and returns the peaks.
    @discardableResult
    public func stop() -> Peaks {
        if !isStopped.exchange(true, ordering: .acquiringAndReleasing) {
            thread.join(timeout: .seconds(2))
        }
        return currentPeaks
    }

    func sample() {
        let perCoordinator = coordinatorPIDs.withLock { $0 }.map { Self.residentBytes(of: $0) ?? 0 }
        let coordinator = perCoordinator.reduce(0, +)
        let workers = workerPIDs.withLock { $0 }.compactMap(Self.residentBytes).reduce(0, +)
        let proportional = (coordinatorPIDs.withLock { $0 } + workerPIDs.withLock { $0 })
            .compactMap(Self.proportionalBytes).reduce(0, +)
        peaks.withLock { peaks in
            peaks.coordinator = max(peaks.coordinator, coordinator)
            peaks.coordinators = Self.elementwiseMax(peaks.coordinators, perCoordinator)
            peaks.workers = max(peaks.workers, workers)
            peaks.total = max(peaks.total, coordinator + workers)
            peaks.proportionalTotal = max(peaks.proportionalTotal, proportional)
        }
    }

    /// The larger of the two values at each index; the longer array's tail as it is.
    static func elementwiseMax(_ left: [Int], _ right: [Int]) -> [Int] {
        (0..<max(left.count, right.count)).map { index in
            max(left.indices.contains(index) ? left[index] : 0, right.indices.contains(index) ? right[index] : 0)
        }
    }

    /// `Pss` of a live process's `/proc/PID/smaps_rollup` in bytes; `nil` when it has exited.
    public static func proportionalBytes(of pid: Int32) -> Int? {
        guard pid > 0 else { return nil }
        guard let rollup = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return nil }
        return parseKilobytes(field: "Pss:", in: rollup)
    }

    /// VmRSS of a live process in bytes; `nil` when it has exited.
    public static func residentBytes(of pid: Int32) -> Int? {
        guard pid > 0 else { return nil }
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        return parseResidentBytes(status: status)
    }

    /// The `VmRSS:   1234 kB` line of a `/proc/PID/status` text, in bytes.
    static func parseResidentBytes(status: String) -> Int? { parseKilobytes(field: "VmRSS:", in: status) }

    /// The `<field>   1234 kB` line of a `/proc` text, in bytes.
    static func parseKilobytes(field: String, in status: String) -> Int? {
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, let kilobytes = Int(fields[1]) else { return nil }
            let (bytes, overflow) = kilobytes.multipliedReportingOverflow(by: 1024)
            return overflow || bytes < 0 ? nil : bytes
        }
        return nil
    }
}
