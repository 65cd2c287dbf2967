import Testing

@testable import ChimeCoordinator

/// A failed `#expect(a == b)` on durable states prints a summary (and which parts differ,
/// through `ModelRun.describe`) instead of every shard of every table.
extension DurableState: CustomTestStringConvertible {
    public var testDescription: String {
        "DurableState(\(reminderCount) reminders, \(unsettledCount) unsettled, \(deliveries.deadLetters.count) dead letters, "
            + "\(deliveries.nagFirings.count) nags, \(deliveries.eventLog.events.count) events, "
            + "\(recipients.registered.count) recipients, \(actionJobs.count) jobs, \(requestLog.count) answers, epoch \(highestRecordedEpoch))"
    }
}
