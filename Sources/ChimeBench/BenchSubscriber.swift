import ChimeRuntime
import ChimeWire
import Foundation
import HelperThreads
import Synchronization
import ChimeClient
import ChimeSecurity

/// What the subscriber thread has seen so far, readable from the observing thread.
public final class ObservationProgress: Sendable {
    private let recordCount = Atomic<Int>(0)
    private let distinctCount = Atomic<Int>(0)
    private let lastRecordMicros = Atomic<Int>(0)
    private let allSeenMicros = Atomic<Int>(0)
    private let probeCount = Atomic<Int>(0)

    /// The defaults shown on each property.
    public init() {}

    /// Fire events that were not plan ids (warm-up probes).
    public var probes: Int { probeCount.load(ordering: .acquiring) }

    /// Records written (duplicates included).
    public var records: Int { recordCount.load(ordering: .acquiring) }
    /// Distinct plan ids written.
    public var distinct: Int { distinctCount.load(ordering: .acquiring) }
    /// When the latest record was taken, epoch seconds.
    public var lastRecordAt: Double? { Self.seconds(lastRecordMicros.load(ordering: .acquiring)) }
    /// When the last missing id arrived, epoch seconds.
    public var allSeenAt: Double? { Self.seconds(allSeenMicros.load(ordering: .acquiring)) }

    func noteProbe() { probeCount.add(1, ordering: .releasing) }

    func noteRecord(at actual: Double, isFirst: Bool, completes: Bool) {
        let micros = Int(actual * 1_000_000)
        lastRecordMicros.store(micros, ordering: .releasing)
        recordCount.add(1, ordering: .releasing)
        if isFirst { distinctCount.add(1, ordering: .releasing) }
        if completes { allSeenMicros.store(micros, ordering: .releasing) }
    }

    private static func seconds(_ micros: Int) -> Double? { micros == 0 ? nil : Double(micros) / 1_000_000 }
}

/// The benchmark's subscriber, on a thread of its own. Each fire event's handler takes
/// `actual` as its first action and appends one line `"<id> <due> <actual>"` to a records
/// file opened with O_APPEND, one `write()` per line (WORKLOADS.md). The `due` written is
/// the event's `dueAt` (milliseconds on the wire); metrics use the plan's.
///
/// Events whose reminder id is not a plan id (warm-up probes) are counted, not written.
public final class BenchSubscriber {
    /// How events are received.
    public enum Mode: String, Sendable, Codable, CaseIterable {
        /// `SubscriberClient` of ChimeCluster, as applications use it: the handler runs after
        /// the event is decoded (Foundation JSON); SUB receive high-water mark 1000 (default).
        case client
        /// A bare SUB socket with no receive high-water mark; `actual` is taken right after
        /// `zmq_msg_recv` and the id is read from the bytes (no JSON decode): the cluster's
        /// delivery without the subscriber's decode cost.
        case raw
        /// A Python process with a pyzmq SUB socket that `json.loads` each event and writes
        /// its own records (``PyzmqSubscription``): what a user's subscriber sees, three
        /// process hops and the subscriber's CPU included. Needs `python3` with pyzmq.
        case pyzmq
    }

    /// Progress for the observing thread.
    public let progress = ObservationProgress()
    private let stopSignal = StopSignal()
    private let thread = HelperThread(name: "chime-bench-subscriber")
    private let isStopped = Atomic<Bool>(false)

    /// Starts the subscriber thread and returns once its subscription is sent (to every shard).
    /// - Parameters:
    ///   - endpoint: the events endpoint (XPUB) of a cluster of one coordinator.
    ///   - map: a cluster of several shards: every shard's events endpoint is subscribed
    ///     (`client`: one `SubscriberClient` per shard through `ClusterSubscriber`; `raw` and
    ///     `pyzmq`: one SUB socket connected to each); `endpoint` is then not used.
    ///   - recordsPath: the records file (created; appended to).
    ///   - count: N, the plan's ids are `0..<count`.
    ///   - curve: the subscriber's keys for a cluster that runs CURVE.
    /// - Throws: `POSIXError` when the records file cannot be opened.
    public init(
        endpoint: String, map: ShardMap? = nil, recordsPath: String, count: Int, mode: Mode, curve: CurveClientKeys? = nil
    ) throws {
        let endpoints = map?.shards.map(\.endpoints.events) ?? [endpoint]
        let descriptor = mode == .pyzmq ? -1 : open(recordsPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard mode == .pyzmq || descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let ready = DispatchSemaphore(value: 0)
        let progress = progress
        let stop = stopSignal
        thread.start {
            let tracker = RecordsTracker(count: count, progress: progress)
            let writer = RecordsWriter(descriptor: descriptor, tracker: tracker)
            do {
                switch mode {
                case .client where endpoints.count > 1:
                    guard let map else { break }
                    let writerBox = UncheckedBox(writer)
                    try ClusterSubscriber(map: map, recipient: nil, stop: stop, curve: curve).run(
                        catchUp: nil, onReady: { ready.signal() }
                    ) { event, _ in
                        // ClusterSubscriber calls this from one shard's thread at a time.
                        let actual = Date().timeIntervalSince1970
                        writerBox.value.record(
                            id: Int(event.firing.reminderId.rawValue), due: event.firing.dueAt.timeIntervalSince1970,
                            actual: actual)
                    }
                case .client:
                    let client = SubscriberClient(endpoint: endpoint, recipient: nil, stop: stop, curve: curve)
                    try client.run(onReady: { ready.signal() }) { event, _ in
                        let actual = Date().timeIntervalSince1970
                        writer.record(
                            id: Int(event.firing.reminderId.rawValue), due: event.firing.dueAt.timeIntervalSince1970,
                            actual: actual)
                    }
                case .raw:
                    try RawSubscription.run(endpoints: endpoints, curve: curve, stop: stop, onReady: { ready.signal() }) { actual, body in
                        writer.record(id: RawSubscription.reminderNumber(in: body), due: RawSubscription.dueAt(in: body), actual: actual)
                    }
                case .pyzmq:
                    try PyzmqSubscription.run(
                        endpoint: endpoints.joined(separator: ","), recordsPath: recordsPath, curve: curve, stop: stop, tracker: tracker,
                        onReady: { ready.signal() })
                }
            } catch {
                StandardStreams.writeError("chime bench: subscriber stopped: \(error)\n")
                ready.signal()
            }
            if descriptor >= 0 { close(descriptor) }
        }
        ready.wait()
    }

    /// Stops the thread and waits (at most 5 s) for it to close the records file.
    public func stop() {
        guard !isStopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopSignal.requestStop()
        thread.join(timeout: .seconds(5))
    }

    deinit { stop() }
}

/// A value handed to a `@Sendable` closure that the sender guarantees is used by one
/// thread at a time (``ClusterSubscriber`` serialises its event calls).
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Which plan ids have been seen, for the subscriber thread's ``ObservationProgress``. Used
/// by that one thread only.
final class RecordsTracker {
    let progress: ObservationProgress
    private var seen: [Bool]
    private var distinct = 0

    init(count: Int, progress: ObservationProgress) {
        self.progress = progress
        seen = [Bool](repeating: false, count: count)
    }

    /// Whether `id` is one of the plan's ids `0..<count`.
    func isPlanID(_ id: Int) -> Bool { seen.indices.contains(id) }

    /// Notes a record of plan id `id` taken at `actual` (epoch seconds).
    func note(id: Int, actual: Double) {
        guard isPlanID(id) else { return }
        let isFirst = !seen[id]
        if isFirst {
            seen[id] = true
            distinct += 1
        }
        progress.noteRecord(at: actual, isFirst: isFirst, completes: isFirst && distinct == seen.count)
    }
}

/// Writes record lines for the subscriber thread and tracks which ids were seen. Used by
/// that one thread only.
final class RecordsWriter {
    let descriptor: Int32
    let tracker: RecordsTracker
    var line: [UInt8] = []

    init(descriptor: Int32, tracker: RecordsTracker) {
        self.descriptor = descriptor
        self.tracker = tracker
        line.reserveCapacity(64)
    }

    /// Appends one line with a single `write()`; ids outside the plan count as probes.
    func record(id: Int?, due: Double?, actual: Double) {
        guard let id, tracker.isPlanID(id) else {
            tracker.progress.noteProbe()
            return
        }
        line.removeAll(keepingCapacity: true)
        RecordLine.append(id: id, due: max(0, due ?? 0), actual: actual, to: &line)
        let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        precondition(written == line.count, "a records line is written whole (errno \(errno))")
        tracker.note(id: id, actual: actual)
    }
}
