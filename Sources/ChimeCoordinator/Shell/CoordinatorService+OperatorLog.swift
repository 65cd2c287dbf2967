import ChimeCore
import ChimeRuntime
import ChimeStore
import Foundation

/// The coordinator's lines for events that come in bursts: at most one line per second per
/// kind, each with the count since the previous one (`RateLimitedLog`).
final class OperatorLog: Sendable {
    /// Firings whose lease ended (expired, or their worker was lost) and that wait again.
    let redeliveries: RateLimitedLog
    /// Firings that used up `maxAttempts` and moved to the dead-letter list.
    let deadLetters: RateLimitedLog
    /// Connections the ZAP handler refused (an unknown key, a role mismatch).
    let refusedConnections: RateLimitedLog
    /// Control connections cut off, those behind longest first, for unread replies past
    /// `limits.controlQueueBytesTotal` (``ConnectionBacklog``).
    let cutControlConnections: RateLimitedLog
    /// Batches not handed to a worker that holds `limits.dispatchQueueBytesPerConnection` it
    /// has not read (their firings wait for a worker that reads).
    let heldDispatches: RateLimitedLog
    /// Worker connections cut off, those behind longest first, for batches left unread past
    /// `limits.dispatchQueueBytesTotal`.
    let cutDispatchConnections: RateLimitedLog

    init(logger: Logger) {
        redeliveries = RateLimitedLog(logger: logger, level: .info, message: "firings redelivered", examplesKey: "firings")
        deadLetters = RateLimitedLog(logger: logger, level: .warning, message: "firings dead-lettered", examplesKey: "firings")
        refusedConnections = RateLimitedLog(
            logger: logger, level: .warning, message: "connections refused", examplesKey: "addresses")
        cutControlConnections = RateLimitedLog(
            logger: logger, level: .warning,
            message: "control connections cut off: their unread replies passed limits.controlQueueBytesTotal",
            examplesKey: "unreadBytes")
        heldDispatches = RateLimitedLog(
            logger: logger, level: .warning,
            message: "batches held back: their worker left limits.dispatchQueueBytesPerConnection unread; firings wait",
            examplesKey: "workers")
        cutDispatchConnections = RateLimitedLog(
            logger: logger, level: .warning,
            message: "worker connections cut off: their unread batches passed limits.dispatchQueueBytesTotal",
            examplesKey: "unreadBytes")
    }
}

extension CoordinatorService {
    /// Logs what the turn changed for operators: the state's notices and, rate-limited, the
    /// redeliveries and dead letters among the turn's journal entries; then writes the
    /// rate-limited lines that came due.
    func logOperatorEvents(_ directives: [CoordinatorDirective]) {
        logNotices()
        logRedeliveries(among: directives)
    }

    /// Logs the state's notices: a worker joined, was lost, quarantined or left (one line
    /// each), a request an admission stage refused (for the peer that sent it, a few a second
    /// at most).
    func logNotices() {
        for notice in state.takeNotices() {
            switch notice {
            case .workerJoined(let worker, let host, let pid, let capacity, let isReturning):
                logger.info(
                    isReturning ? "worker rejoined" : "worker joined",
                    ["worker": "\(worker.rawValue)", "host": "\(host)", "pid": .integer(pid), "capacity": .int(capacity)])
            case .workerLost(let worker, let host, let pid, let silentSeconds, let leases, let firings):
                var details: [String: LogValue] = [
                    "worker": "\(worker.rawValue)", "host": "\(host)", "pid": .integer(pid), "leases": .int(leases),
                    "silentSeconds": .rounded(silentSeconds, digits: 1),
                ]
                if !firings.isEmpty { details["firings"] = .string(firings.map(\.text).joined(separator: ",")) }
                logger.warning("worker lost", details)
            case .workerQuarantined(let worker, let seconds):
                logger.warning(
                    "worker quarantined: its leases keep running out",
                    ["worker": "\(worker.rawValue)", "seconds": .rounded(seconds, digits: 0)])
            case .workerLeft(let worker, let host, let pid, let handedBack, let firings):
                var details: [String: LogValue] = [
                    "worker": "\(worker.rawValue)", "host": "\(host)", "pid": .integer(pid), "handedBack": .int(handedBack),
                ]
                if !firings.isEmpty { details["firings"] = .string(firings.map(\.text).joined(separator: ",")) }
                logger.info("worker left", details)
            case .requestRefused(let operation, let stage, let role, let error):
                if stage == .authorization {
                    inbound.peerLog.warning(
                        inbound.currentPeer, "forbidden control request",
                        ["op": "\(operation.rawValue)", "role": "\(role?.rawValue ?? "none")", "reason": "\(error.message)"])
                } else {
                    inbound.peerLog.warning(
                        inbound.currentPeer, "rejected control request", ["code": "\(error.code.rawValue)", "reason": "\(error.message)"])
                }
            case .unservedData(let reminders, let firings, let slots):
                logger.warning(
                    "holding data of slots the map gives to other shards, outside any move: not fired, listed or served here",
                    ["reminders": .int(reminders), "firings": .int(firings), "slots": .int(slots)])
            case .moveLostAtTarget(let id, let slots):
                logger.error(
                    "the map register committed a move this shard never adopted (its journal lost the adopted slice): the reminders of its slots are lost",
                    ["move": "\(id.rawValue)", "slots": .int(slots)])
            }
        }
    }

    /// Counts the redeliveries and dead letters among `directives`' journal entries into their
    /// rate-limited lines, and writes the lines that came due.
    func logRedeliveries(among directives: [CoordinatorDirective]) {
        var redelivered: (count: Int, examples: [String]) = (0, [])
        var deadLettered: (count: Int, examples: [String]) = (0, [])
        for case .append(let entry) in directives {
            switch entry {
            case .leaseExpired(let firingId, _):
                redelivered.count += 1
                if redelivered.examples.count < LogRateWindow.maximumExamples { redelivered.examples.append(firingId.text) }
            case .deadLettered(let firingId, _):
                deadLettered.count += 1
                if deadLettered.examples.count < LogRateWindow.maximumExamples { deadLettered.examples.append(firingId.text) }
            default:
                continue
            }
        }
        let now = ContinuousClock.now
        if redelivered.count > 0 { telemetry.operatorLog.redeliveries.record(redelivered.count, examples: redelivered.examples, at: now) }
        if deadLettered.count > 0 { telemetry.operatorLog.deadLetters.record(deadLettered.count, examples: deadLettered.examples, at: now) }
        telemetry.operatorLog.redeliveries.flush(at: now)
        telemetry.operatorLog.deadLetters.flush(at: now)
        telemetry.operatorLog.refusedConnections.flush(at: now)
        telemetry.operatorLog.cutControlConnections.flush(at: now)
        telemetry.operatorLog.heldDispatches.flush(at: now)
        telemetry.operatorLog.cutDispatchConnections.flush(at: now)
    }
}
