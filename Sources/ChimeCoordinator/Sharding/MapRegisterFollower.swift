import ChimeJournal
import ChimeWire
import Foundation
import HelperThreads

/// Reads the map register on a thread of its own, so a slow register (a Kubernetes API
/// server that answers late or not at all: each GET may take up to its 5 s timeout) never
/// holds up the coordinator's loop. About once a second (`interval`) it compares the
/// register's stamp with the last one and reads the record when it changed (and at the
/// start); on request (``requestFreshRead()``) it reads at once, for a `move` step. What it
/// reads goes to ``handoff``, which the loop takes from at the start of each turn
/// (`CoordinatorService.takeMapReads`): the state still changes only on the loop.
///
/// The loop is not woken when a record arrives: its poll waits at most 100 ms
/// (`CoordinatorService.pollTimeout`), well within the register's one-second pace.
final class MapRegisterFollower: Sendable {
    /// How often the register's stamp is compared, by default.
    static let defaultInterval = Duration.seconds(1)
    /// How long ``stop()`` waits for a register call under way (see there).
    static let stopTimeout = Duration.milliseconds(500)

    /// What the thread read, for the loop.
    let handoff = MapRegisterHandoff()
    /// How logs name the register.
    let qualifiedName: String
    private let wake = DispatchSemaphore(value: 0)
    private let thread = HelperThread(name: "chime-map-reg")

    /// Starts the thread; its first read starts at once.
    /// - Parameter interval: between two stamp comparisons.
    init(register: any SlotMapRegistering, interval: Duration = MapRegisterFollower.defaultInterval) {
        qualifiedName = register.qualifiedName
        let handoff = handoff
        let wake = wake
        thread.start { Self.follow(register, interval: interval, handoff: handoff, wake: wake) }
    }

    /// Asks for a read that starts now (or as soon as the read under way ends).
    /// - Returns: its ticket (see ``MapRegisterHandoff/requestFreshRead()``).
    func requestFreshRead() -> UInt64 {
        let ticket = handoff.requestFreshRead()
        wake.signal()
        return ticket
    }

    /// Ends the thread: it stops before its next register call and is waited for up to
    /// ``stopTimeout``. A call under way is not interrupted (libcurl has no cancel from
    /// another thread short of a progress callback); when one outlasts the wait the thread
    /// ends on its own once the call returns (within the register's timeout), touching only
    /// what it holds itself: its copy of the register (a value) and the hand-off. The stop of
    /// a coordinator whose API server hangs is thus not held up (a standby waits for its lock).
    /// - Returns: whether the thread ended within the wait.
    @discardableResult
    func stop(timeout: Duration = MapRegisterFollower.stopTimeout) -> Bool {
        handoff.requestStop()
        wake.signal()
        return thread.join(timeout: timeout)
    }

    /// The thread's body: fresh reads first, then the periodic comparison, then a wait for
    /// the next poll or a wake-up.
    private static func follow(
        _ register: any SlotMapRegistering, interval: Duration, handoff: MapRegisterHandoff, wake: DispatchSemaphore
    ) {
        // `.none` until the first poll: the first poll always reads.
        var lastStamp: String?? = .none
        var nextPoll = ContinuousClock.now
        while !handoff.isStopRequested {
            if let ticket = handoff.startFreshRead() {
                handoff.hand(read(register), freshRead: ticket, at: .now)
                continue
            }
            let now = ContinuousClock.now
            if now >= nextPoll {
                nextPoll = now + interval
                let stamp = register.stamp()
                defer { lastStamp = .some(stamp) }
                guard lastStamp != .some(stamp), !handoff.isStopRequested else { continue }
                handoff.hand(read(register), at: .now)
                continue
            }
            let (seconds, attoseconds) = (nextPoll - now).components
            _ = wake.wait(timeout: .now() + Double(seconds) + Double(attoseconds) * 1e-18)
        }
    }

    private static func read(_ register: any SlotMapRegistering) -> Result<SlotMapRecord?, WireError> {
        do throws(WireError) {
            return .success(try register.read())
        } catch {
            return .failure(error)
        }
    }
}
