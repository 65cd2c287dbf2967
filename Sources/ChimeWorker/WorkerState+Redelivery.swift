import ChimeCore
import ChimeWire

/// A firing delivered as a fire event whose destinations have no outcome yet.
struct AwaitedDelivery: Sendable, Hashable {
    /// Its acknowledgement, sent with the delivery report (the epoch of the newest batch that
    /// handed the firing over).
    var acknowledgement: WorkerMessage.Acknowledgement
    /// The keys (``Destination/key``) of the destinations it is being sent to.
    var destinationKeys: Set<String>
}

extension WorkerState {
    /// Answers a firing that a batch of a newer epoch hands out again, when this worker is
    /// still sending it, or has delivered it, to every destination of `destinationKeys`: a
    /// coordinator that took over hands out every firing whose acknowledgement it has not
    /// journaled (an acknowledgement of the earlier epoch is not counted by the newer one),
    /// and sending it again would reach each destination twice (same `webhook-id`, but a
    /// second request). Still being sent: its report will go out with `acknowledgement`
    /// (the newer epoch). Delivered: `acknowledgement` goes out now with the report it had.
    ///
    /// A batch of the same epoch (a retried dead letter, a lease run out) is never answered
    /// here, nor a firing with a destination it was not sent to, nor one a destination failed.
    /// - Returns: whether the firing was answered (no `deliverToDestinations` for it).
    mutating func answerRedelivery(
        _ acknowledgement: WorkerMessage.Acknowledgement, to destinationKeys: Set<String>, monotonic: Double?
    ) -> Bool {
        let id = acknowledgement.firingId
        if var awaited = awaitingDestinations[id] {
            guard awaited.acknowledgement.epoch < acknowledgement.epoch, destinationKeys.isSubset(of: awaited.destinationKeys) else {
                return false
            }
            awaited.acknowledgement = acknowledgement
            awaitingDestinations[id] = awaited
            redeliveriesNotResent += 1
            return true
        }
        guard let delivered = deliveredFirings[id], delivered.epoch < acknowledgement.epoch,
            destinationKeys.isSubset(of: delivered.destinationKeys)
        else { return false }
        deliveredFirings.remember(delivered.report, epoch: acknowledgement.epoch, destinationKeys: delivered.destinationKeys)
        if pendingAcks.isEmpty, acknowledgementsWaitingSince == nil { acknowledgementsWaitingSince = monotonic }
        pendingAcks.append(acknowledgement)
        pendingReports.append(delivered.report)
        redeliveriesNotResent += 1
        return true
    }
}
