import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import ZeroMQ

extension WorkerService {
    /// How long a stopping worker waits for its running action hooks before it leaves anyway
    /// (their jobs then end by the coordinator's action time limit), in seconds.
    static let stopGrace = 5.0

    /// A stopping worker's last steps (after SIGTERM): it delivers the batches already in
    /// its socket (publishing and acknowledging them), waits up to `stopGrace` for running
    /// action hooks, then sends its acknowledgements and outcomes with `leaving`
    /// (`WorkerState.leave()`), so whatever is still on its way to it is handed to another
    /// worker at once instead of after its lease. The sockets close with their linger, which
    /// lets that last message out.
    /// - Throws: `ZeroMQError` from the sockets.
    func handBack(incoming: Socket, results: Socket, events: Socket, isEventPathReady: Bool) throws {
        let started = ContinuousClock.now
        var delivered = 0
        if isEventPathReady {
            while let frames = try incoming.receiveMessage(dontWait: true) {
                let before = state.deliveredCount
                try deliver(frames, events: events)
                delivered += state.deliveredCount - before
            }
        }
        let graceEnd = started + .milliseconds(Int64(Self.stopGrace * 1000))
        while actions.runningHooks > 0 && ContinuousClock.now < graceEnd { Thread.sleep(forTimeInterval: 0.01) }
        for outcome in actions.takeFinished() { state.onJobFinished(outcome) }
        let message = state.leave()
        let isSent = try results.send(codec.encodeFrames(message), dontWait: true)
        // Also on dispatch, without acknowledgements (a few bytes, under the dispatch bound):
        // a heartbeat sent there before it must not read as a return after `leaving` arrived
        // on results (two sockets keep no order between them).
        var farewell = message
        farewell.acks = []
        farewell.outcomes = nil
        _ = try? incoming.send([codec.encode(farewell)], dontWait: true)
        let elapsed = ContinuousClock.now - started
        logger.info("worker stopping", [
            "id": "\(state.id.rawValue)", "delivered": .int(state.deliveredCount), "deliveredWhileStopping": .int(delivered),
            "acknowledged": .int(message.acks.count), "handedBack": .bool(isSent),
            "hooksLeftRunning": .int(actions.runningHooks),
            "milliseconds": .integer(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000),
        ])
    }
}
