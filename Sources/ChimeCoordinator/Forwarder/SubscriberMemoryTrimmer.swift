import ChimeRuntime
import Foundation
import HelperThreads
import Synchronization
import ZeroMQ

/// Gives the memory of a subscriber's subscriptions back to the system after it disconnects.
///
/// libzmq 4.3's XPUB keeps every subscription of a connection in its subscription trie (with
/// `ZMQ_XPUB_MANUAL` too, in a second trie), about 3 KiB for a 1,000-byte topic, and frees
/// them when the connection ends; glibc keeps the freed pages, so 20,000 subscriptions of
/// 1,000 bytes left the coordinator +62 MiB after the subscriber had gone. This thread reads
/// the forwarder XPUB's monitor and, ``quietDelay`` after the last disconnect (the proxy thread
/// must first drop the connection's pipe, which frees the trie nodes), calls `malloc_trim`,
/// then once more ``minimumInterval`` later (a connection with many subscriptions may be
/// dropped after the first pass), never twice within ``minimumInterval``: a peer that
/// reconnects in a loop costs at most one trim per interval. The count of subscriptions one connection holds is not bounded (libzmq
/// has no limit and no way to drop one connection of a bound socket): README "Limits".
final class SubscriberMemoryTrimmer: Sendable {
    /// How long after the last disconnect the trim waits, in seconds.
    static let quietDelay = 1.0
    /// The shortest time between two trims, in seconds.
    static let minimumInterval = 5.0

    private let context: Context
    private let monitorEndpoint: String
    private let thread = HelperThread(name: "chime-sub-trim", priority: .lowered)
    private let isStopping = Atomic<Bool>(false)

    init(context: Context, monitorEndpoint: String) {
        self.context = context
        self.monitorEndpoint = monitorEndpoint
    }

    /// Connects to the monitor and starts the thread.
    /// - Throws: `ZeroMQError` when the monitor socket cannot be made.
    func start() throws {
        let context = context
        let monitorEndpoint = monitorEndpoint
        try thread.start {
            let monitor = try Socket(.pair, context: context)
            try monitor.set(.linger(milliseconds: 0))
            try monitor.set(.receiveTimeout(milliseconds: 250))
            try monitor.connect(to: monitorEndpoint)
            return monitor
        } run: { [self] monitor in
            var trimAt: ContinuousClock.Instant?
            var lastTrim: ContinuousClock.Instant?
            var passesLeft = 0
            while !self.isStopping.load(ordering: .relaxed) {
                let frames: [Data]?
                do {
                    frames = try monitor.receiveMessage()
                } catch {
                    // The context was shut down: the process is stopping.
                    return
                }
                let now = ContinuousClock.now
                if let frames, let event = SocketMonitorEvent(frames: frames) {
                    if event.kind == .monitorStopped { return }
                    if event.kind == .disconnected {
                        trimAt = now.advanced(by: .seconds(Self.quietDelay))
                        passesLeft = 2
                    }
                }
                guard let due = trimAt, now >= due else { continue }
                if let lastTrim, now - lastTrim < .seconds(Self.minimumInterval) { continue }
                passesLeft -= 1
                trimAt = passesLeft > 0 ? now.advanced(by: .seconds(Self.minimumInterval)) : nil
                lastTrim = now
                Allocator.releaseFreePages()
            }
        }
    }

    /// Stops the thread (at most 1 s).
    func stop() {
        isStopping.store(true, ordering: .relaxed)
        thread.join(timeout: .seconds(1))
    }
}
