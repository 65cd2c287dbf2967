import Foundation

extension TriggerStart {
    /// The start with its seconds set to zero (option `truncateToMinute`, as many reminder
    /// apps do): a wall-clock start loses its seconds; an instant is rounded down to the
    /// whole UTC minute, sub-seconds included (every zone in use has whole-minute offsets,
    /// so this is the local minute too).
    public func truncatedToMinute() -> TriggerStart {
        switch self {
        case .instant(let date):
            let seconds = date.timeIntervalSinceReferenceDate
            return .instant(Date(timeIntervalSinceReferenceDate: (seconds / 60).rounded(.down) * 60))
        case .wallClock(var local, let zone):
            local.second = 0
            return .wallClock(local, zoneIdentifier: zone)
        }
    }
}

extension Trigger {
    /// The trigger with its start truncated to the minute; repeats and the remind-before
    /// offset are kept. See ``TriggerStart/truncatedToMinute()``.
    public func truncatedToMinute() -> Trigger {
        var copy = self
        copy.start = start.truncatedToMinute()
        return copy
    }
}
