import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The disk-contention generator of issue 28: a thread that writes 64 MiB files in 1 MiB
/// writes to a directory on the store's filesystem and `fdatasync`s each file, in a loop,
/// until stopped — what another busy process on the same disk does to the coordinator's
/// journal writes and fsyncs.
///
/// It runs in the benchmark's process, not in any Chime process, so its CPU shows in none of
/// them. Each file is removed after its fsync, so the generator needs 64 MiB of free space.
final class DiskContention: @unchecked Sendable {
    /// Bytes per file before its `fdatasync` (64 MiB).
    static let fileBytes = 64 << 20
    /// Bytes per `write` (1 MiB).
    static let chunkBytes = 1 << 20

    /// What the generator did while it ran.
    struct Figures: Codable, Sendable, Equatable {
        /// MiB written and fsynced per second of running.
        var mibPerSecond: Double
        /// `fdatasync` calls made (one per file).
        var fsyncs: Int
        /// The median `fdatasync` duration, milliseconds.
        var fsyncP50Ms: Double
        /// The slowest `fdatasync`, milliseconds.
        var fsyncMaxMs: Double
    }

    private let directory: URL
    private let lock = NSLock()
    private var isStopping = false
    private var bytes = 0
    private var fsyncSeconds: [Double] = []
    private var startedAt = ContinuousClock.now
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the generator writing into `directory` (created if missing).
    /// - Throws: what creating the directory throws.
    init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let thread = Thread { [self] in run() }
        thread.name = "chime-bench-disk"
        self.thread = thread
        startedAt = .now
        thread.start()
    }

    /// Stops the generator, waits for its current write to end and returns its figures.
    func stop() -> Figures {
        lock.withLock { isStopping = true }
        if thread != nil {
            finished.wait()
            thread = nil
        }
        let elapsed = ContinuousClock.now - startedAt
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return lock.withLock {
            let sorted = fsyncSeconds.sorted()
            return Figures(
                mibPerSecond: seconds > 0 ? Double(bytes) / Double(1 << 20) / seconds : 0, fsyncs: sorted.count,
                fsyncP50Ms: sorted.isEmpty ? 0 : sorted[sorted.count / 2] * 1000, fsyncMaxMs: (sorted.last ?? 0) * 1000)
        }
    }

    private var shouldStop: Bool { lock.withLock { isStopping } }

    private func run() {
        defer { finished.signal() }
        let chunk = [UInt8](repeating: 0xA5, count: Self.chunkBytes)
        var number = 0
        while !shouldStop {
            number += 1
            let path = directory.appendingPathComponent("contention-\(number % 2).bin").path
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            guard descriptor >= 0 else { return }
            var written = 0
            while written < Self.fileBytes, !shouldStop {
                let count = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                written += count
            }
            let start = ContinuousClock.now
            _ = fdatasync(descriptor)
            let took = ContinuousClock.now - start
            close(descriptor)
            unlink(path)
            let seconds = Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
            lock.withLock {
                bytes += written
                fsyncSeconds.append(seconds)
            }
        }
    }
}
