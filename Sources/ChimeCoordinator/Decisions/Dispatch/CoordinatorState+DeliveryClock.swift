import ChimeCore
import Foundation

extension CoordinatorState {
    /// When a firing was delivered, by the coordinator's own clocks: the worker's `firedAt`
    /// (its wall clock, which may be off by days) kept only when it lies between this
    /// dispatch and the acknowledgement's arrival, else clamped to that window.
    ///
    /// The window's start is the dispatch's monotonic reading turned into this coordinator's
    /// wall clock, its end `now`; so lateness, the
    /// delivered list, nags and the events' `firedAt` never follow a worker's clock outside
    /// what the coordinator itself saw.
    func deliveryInstant(claimed: Date, of flight: DispatchLine.InFlight, at now: Date) -> Date {
        let dispatchedAt = min(clocks.wallClock(at: flight.dispatchedAt), now)
        return min(max(claimed, dispatchedAt), now)
    }
}
