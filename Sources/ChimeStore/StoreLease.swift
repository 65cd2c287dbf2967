import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The holder's side of the store's **lease**: leadership that a pause cannot hold.
///
/// `flock` alone cannot take the store from a holder that is alive but stopped (SIGSTOP, a
/// hung machine, a partition from the store's volume): the kernel keeps its lock. So the
/// holder also renews a lease: a thread of its own rewrites `<store>/LEASE` (a `LeaseRecord`)
/// every `renewInterval`. A standby that sees the file unchanged for the lease `duration`
/// on its own clock (`LeaseObserver`) takes the store over: it kills the holder when it is a
/// process of its own host and namespace (`ProcessIdentity.isVisibleLocally`), which ends
/// every write and send at once and frees its ports, else it replaces `LOCK`.
///
/// The holder fences itself by time: its lease counts as held only until `duration −
/// renewInterval` after the start of its last successful renewal, measured on its own
/// monotonic clock, and a lapsed lease is never renewed again (etcd: an expired lease cannot
/// be kept alive). `StoreLock.verifyOwnership()` checks it, so the loop and the journal writer
/// stop before the standby can have taken over, provided the two clocks' rates differ by
/// less than `renewInterval / duration` (1/6 by default; real clocks differ by < 0.1 %).
///
/// The design follows the leases of Chubby (Burrows, OSDI 2006) and etcd, the Kubernetes
/// `Lease` object with client-go's leader election (the candidate measures `leaseDuration`
/// from when *it* last saw `renewTime` change, on its own clock, so no clock synchronisation
/// is needed), and the ZeroMQ Guide's Binary Star (ch. 4: a backup takes over when the
/// primary's heartbeats stop). Kleppmann ("How to do distributed locking", 2016) shows why a
/// lease alone is not enough for a holder that can pause between its check and its write:
/// on one host the kill closes that gap; across hosts the epoch (`EPOCH`, stamped on every
/// dispatch) fences what reaches workers, and a stale journal write breaks the record
/// sequence, which the next start refuses loudly (Docs/Chime.docc/Operations/Failover.md).
public final class StoreLease: Sendable {
    /// The default lease duration: a stopped holder loses the store this long after its last
    /// renewal.
    public static let defaultDuration = Duration.milliseconds(1500)

    /// How long a renewal counts for a reader.
    public let duration: Duration
    /// How often the holder renews (a sixth of `duration`).
    public let renewInterval: Duration
    /// The lease file.
    public let path: String
    private let descriptor: Int32
    private let holder: ProcessIdentity
    private let origin = ContinuousClock.now
    /// Nanoseconds after `origin` at which the last successful renewal started.
    private let lastRenewal = Atomic<Int64>(0)
    /// Set once the lease lapsed: it is never renewed again.
    private let isLapsed = Atomic<Bool>(false)
    private let renewals = Atomic<UInt64>(0)
    private let failure = Mutex<JournalError?>(nil)
    private let stopRequested = Atomic<Bool>(false)
    /// A pipe whose write end `stop()` closes to wake the renewal thread at once; the thread
    /// waits on it with `poll`, whose timeout runs on the monotonic clock. (A semaphore's
    /// timed wait turns its deadline into wall-clock time: a wall-clock step back of 2 s made
    /// one renewal wait 2.25 s and the lease lapse.)
    private let wakePipe: (read: Int32, write: Int32)
    private let finished = DispatchSemaphore(value: 0)

    /// Writes the first renewal (durable in the page cache before it returns) and starts the
    /// renewal thread.
    /// - Parameters:
    ///   - directory: the store directory (its lock is held by this process).
    ///   - duration: the lease duration (at least 60 ms).
    /// - Throws: `JournalError` `.io` (or `.noSpace`) when `LEASE` cannot be opened or written.
    init(directory: URL, duration: Duration) throws {
        precondition(duration >= .milliseconds(60), "a lease shorter than 60 ms cannot be renewed in time")
        self.duration = duration
        self.renewInterval = duration / 6
        self.path = directory.appendingPathComponent("LEASE").path
        self.holder = ProcessIdentity.current
        descriptor = try FileCalls.openFile(path, O_WRONLY | O_CREAT)
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            let error = FileCalls.error(errno, "pipe", path)
            FileCalls.closeFile(descriptor)
            throw error
        }
        wakePipe = (ends[0], ends[1])
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        do {
            try renew(at: .now)
        } catch {
            FileCalls.closeFile(descriptor)
            FileCalls.closeFile(ends[0])
            FileCalls.closeFile(ends[1])
            throw error
        }
        let thread = Thread { [self] in runRenewals() }
        thread.name = "chime-lease"
        thread.start()
    }

    /// How long after the start of the last successful renewal the holder still counts the
    /// lease as its own: `duration − renewInterval`.
    public var holdsFor: Duration { duration - renewInterval }

    /// Throws when the lease lapsed (no successful renewal for `holdsFor`): the holder must
    /// then stop writing and sending, since a standby may take the store over.
    /// - Throws: `JournalError` `.lockLost`.
    public func check(at now: ContinuousClock.Instant = .now) throws {
        let silence = now - (origin + .nanoseconds(lastRenewal.load(ordering: .acquiring)))
        guard silence >= holdsFor || isLapsed.load(ordering: .acquiring) else { return }
        isLapsed.store(true, ordering: .releasing)
        let reason = failure.withLock { $0 }.map { "renewing it failed: \($0.message)" } ?? "paused or starved"
        throw JournalError(
            .lockLost, path: path,
            message: "the store's lease lapsed: no renewal for \(Self.format(silence)) (\(reason)); a standby may take the store over after \(Self.format(duration)), so this coordinator stops writing and sending")
    }

    /// Stops renewing (the lock's release) and closes the file; waits for the thread.
    func stop() {
        guard !stopRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // The read end sees end-of-file: the renewal thread's poll returns at once.
        FileCalls.closeFile(wakePipe.write)
        finished.wait()
        FileCalls.closeFile(wakePipe.read)
        FileCalls.closeFile(descriptor)
    }

    /// Waits `renewInterval` on the monotonic clock, or until `stop()`.
    private func waitForNextRenewal() {
        let deadline = ContinuousClock.now + renewInterval
        var wake = pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)
        while !stopRequested.load(ordering: .acquiring) {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return }
            let milliseconds = Int32(clamping: Self.milliseconds(remaining) + 1)
            if poll(&wake, 1, milliseconds) > 0 { return }
        }
    }

    private func runRenewals() {
        while !stopRequested.load(ordering: .acquiring) {
            waitForNextRenewal()
            if stopRequested.load(ordering: .acquiring) { break }
            let now = ContinuousClock.now
            // A lease that lapsed (the process was stopped past it) stays lost: renewing it now
            // could overlap a standby that already took over.
            if (try? check(at: now)) == nil { break }
            do {
                try renew(at: now)
            } catch let error as JournalError {
                failure.withLock { $0 = error }
            } catch {
                failure.withLock { $0 = JournalError(.io, path: path, message: "\(error)") }
            }
        }
        finished.signal()
    }

    private func renew(at start: ContinuousClock.Instant) throws {
        let number = renewals.add(1, ordering: .relaxed).newValue
        let record = LeaseRecord(
            renewal: number, durationMilliseconds: Int(Self.milliseconds(duration)), holder: holder)
        try record.bytes.withUnsafeBytes { try FileCalls.writeAll(descriptor, $0, at: 0, path: path) }
        let elapsed = start - origin
        lastRenewal.store(
            elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000, ordering: .releasing)
        failure.withLock { $0 = nil }
    }

    /// `duration` in whole milliseconds.
    public static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func format(_ duration: Duration) -> String {
        String(format: "%.2f s", Double(milliseconds(duration)) / 1000)
    }
}
