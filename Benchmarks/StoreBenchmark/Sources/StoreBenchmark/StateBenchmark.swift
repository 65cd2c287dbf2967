import ChimeCore
import ChimeWire
import Foundation
import ChimeCoordinator

/// The coordinator's pure state in a W1-shaped burst, with no sockets and no disk: `count`
/// one-shots due at one instant, ticked and acknowledged batch by batch by two workers.
/// Prints the microseconds per firing (tick, dispatch, acknowledgement) of each round.
func runStateBenchmark(count: Int, rounds: Int) {
    let due = Date(timeIntervalSince1970: 1_800_000_000)
    let client = ClientAddress(routing: [Data([1])])
    var perFiring: [Double] = []
    for _ in 1...rounds {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 3600
        var state = CoordinatorState(configuration: configuration, startedAt: due)
        state.finishRecovery(at: due.addingTimeInterval(-60))
        for worker in ["w1", "w2"] {
            let hello = WorkerMessage(worker: WorkerID(worker), host: "h", pid: 1, capacity: 4096, delivered: 0)
            _ = state.onWorkerMessage(hello, viaDispatch: true, at: due)
        }
        for first in stride(from: 0, to: count, by: 1000) {
            let reminders = (first..<min(count, first + 1000)).map { index in
                Reminder(
                    id: ReminderID("reminder-\(index)"), recipient: RecipientID("user-\(index % 1000)"),
                    content: Content(title: "Stand-up", body: "Daily stand-up in room 4", sound: "default", badge: 1),
                    trigger: Trigger(start: .instant(due)))
            }
            _ = state.onRequest(ControlRequest(command: .schedule(reminders)), from: client, at: due.addingTimeInterval(-10))
        }
        var acknowledged = 0
        let elapsed = seconds {
            while acknowledged < count {
                var acks: [WorkerID: [WorkerMessage.Acknowledgement]] = [:]
                for directive in state.onTick(now: due) {
                    guard case .dispatch(let batch, let worker) = directive else { continue }
                    acks[worker, default: []] += batch.firings.map {
                        WorkerMessage.Acknowledgement(firingId: $0.firingId, firedAt: due, attempt: $0.attempt, epoch: batch.epoch)
                    }
                }
                for (worker, list) in acks {
                    acknowledged += list.count
                    let message = WorkerMessage(worker: worker, host: "h", pid: 1, capacity: 4096, delivered: acknowledged, acks: list)
                    _ = state.onWorkerMessage(message, at: due)
                }
            }
        }
        perFiring.append(elapsed / Double(count) * 1e6)
    }
    perFiring.sort()
    print(String(format: "state: %d firings, µs per firing (tick + dispatch + ack): median %.3f, min %.3f, max %.3f",
                 count, perFiring[perFiring.count / 2], perFiring.first ?? 0, perFiring.last ?? 0))
}
