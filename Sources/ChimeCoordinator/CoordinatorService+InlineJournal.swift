import Foundation

extension CoordinatorService {
    /// How long this turn can spare for an `fdatasync` on the loop (`fsync: always`): until
    /// the next firing or lease expiry is due. Firings would otherwise wait behind the disk,
    /// so with one due now (a burst) every fsync stays on the journal writer thread.
    func inlineAllowance() -> JournalWriter.InlineAllowance {
        guard let wake = state.nextWake else { return .unlimited }
        let spare = wake.timeIntervalSince(clock.now)
        return spare > 0 ? .seconds(spare) : .none
    }
}
