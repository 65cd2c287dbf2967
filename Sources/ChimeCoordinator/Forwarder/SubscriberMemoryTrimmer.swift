import ChimeRuntime
import Foundation
import HelperThreads
import Synchronization
import ZeroMQ

/// Gives the memory of a subscriber's subscriptions back to the system after it disconnects.
///
/// libzmq 4.3's XPUB keeps every subscription of a connection in its subscription trie (with
/// `ZMQ_XPUB_MANUAL` too, in a second trie), a node per topic byte, and frees
/// them when the connection ends; glibc keeps the freed pages, so 20,000 subscriptions of
/// 1,000 bytes left the coordinator +62 MiB after the subscriber had gone. The forwarder's
/// loop reads the XPUB's monitor and calls ``noteDisconnect()`` for each disconnect; this thread, ``quietDelay`` after the last one (the proxy thread
/// must first drop the connection's pipe, which frees the trie nodes), calls `malloc_trim`,
/// then once more ``minimumInterval`` later (a connection with many subscriptions may be
/// dropped after the first pass), never twice within ``minimumInterval``: a peer that
/// reconnects in a loop costs at most one trim per interval. How many subscriptions a peer
/// may hold is bounded by the forwarder (``SubscriptionBook``).
final class SubscriberMemoryTrimmer: Sendable {
    /// How long after the last disconnect the trim waits, in seconds.
    static let quietDelay = 1.0
    /// The shortest time between two trims, in seconds.
    static let minimumInterval = 5.0

    private let thread = HelperThread(name: "chime-sub-trim", priority: .lowered)
    private let isStopping = Atomic<Bool>(false)
    private let disconnects = Atomic<Int>(0)

    init() {}

    /// Tells the trimmer a subscriber connection ended (any thread).
    func noteDisconnect() {
        disconnects.add(1, ordering: .relaxed)
    }

    /// Starts the thread, which looks for disconnects every 250 ms.
    func start() {
        thread.start { [self] in
            var trimAt: ContinuousClock.Instant?
            var lastTrim: ContinuousClock.Instant?
            var passesLeft = 0
            var seen = 0
            while !self.isStopping.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: 0.25)
                let now = ContinuousClock.now
                let count = disconnects.load(ordering: .relaxed)
                if count != seen {
                    seen = count
                    trimAt = now.advanced(by: .seconds(Self.quietDelay))
                    passesLeft = 2
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
