import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import ZeroMQ

extension WorkerService {
    /// How long a stopping worker waits for its running action hooks before it leaves anyway
    /// (their jobs then end by the coordinator's action time limit), in seconds.
    static let stopGrace = 5.0

    /// A stopping service's first step (after SIGTERM, or its shard leaving the map): it
    /// delivers the batches already in its socket (publishing them, and acknowledging them in
    /// its last message), then waits, without holding up the loop, up to `stopGrace` for its
    /// running action hooks (``advanceLeaving(at:)``).
    /// - Throws: `ZeroMQError` from the sockets.
    func beginLeaving(at now: ContinuousClock.Instant) throws {
        guard var link, link.leavingBy == nil else { return }
        link.leavingBy = now + .milliseconds(Int64(Self.stopGrace * 1000))
        link.leavingSince = now
        self.link = link
        if link.isEventPathReady {
            let before = state.deliveredCount
            while let frames = try link.incoming.receiveMessage(dontWait: true) {
                try deliver(frames, events: link.events)
            }
            self.link?.deliveredWhileLeaving = state.deliveredCount - before
        }
    }

    /// A leaving service's last step, once its action hooks have ended or `stopGrace` has
    /// passed: it sends its acknowledgements and outcomes with `leaving`
    /// (`WorkerState.leave()`), so whatever is still on its way to it is handed to another
    /// worker at once instead of after its lease, and closes its sockets, whose linger lets
    /// that last message out.
    /// - Returns: whether the service has left (and is closed); `false` while hooks still run.
    /// - Throws: `ZeroMQError` from the sockets.
    func advanceLeaving(at now: ContinuousClock.Instant) throws -> Bool {
        guard let link, let leavingBy = link.leavingBy else { return link == nil }
        if actions.runningHooks > 0 && now < leavingBy { return false }
        for outcome in actions.takeFinished() { state.onJobFinished(outcome) }
        let message = state.leave()
        let isSent = try link.results.send(codec.encodeFrames(message), dontWait: true)
        // Also on dispatch, without acknowledgements (a few bytes, under the dispatch bound):
        // a heartbeat sent there before it must not read as a return after `leaving` arrived
        // on results (two sockets keep no order between them).
        var farewell = message
        farewell.acks = []
        farewell.outcomes = nil
        _ = try? link.incoming.send([codec.encode(farewell)], dontWait: true)
        let elapsed = ContinuousClock.now - (link.leavingSince ?? now)
        logger.info("worker stopping", [
            "id": "\(state.id.rawValue)", "delivered": .int(state.deliveredCount), "deliveredWhileStopping": .int(link.deliveredWhileLeaving),
            "acknowledged": .int(message.acks.count), "handedBack": .bool(isSent),
            "hooksLeftRunning": .int(actions.runningHooks),
            "milliseconds": .integer(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000),
        ])
        close()
        return true
    }
}
