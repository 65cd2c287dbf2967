import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation
import ZeroMQ

/// Carrying out the state's directives, the shell's one way to act: journal entries to the
/// journal writer, batches to workers, every reply and event into the ``Outbox`` (which sends
/// each once its ticket is durable), and the store's and the map register's work to their
/// threads.
extension CoordinatorService {
    /// Carries out `directives`, in two passes: first the turn's dispatches (at once) and
    /// journal entries (handed to the journal writer together: it writes a lone request's few
    /// entries on this thread when it is idle, so the reply leaves this turn), then, in order,
    /// the messages (queued behind those entries) and the store's and the register's work;
    /// then sends what may leave.
    ///
    /// Dispatch does not wait for the fsync: a firing whose `dispatched` entry is lost in a
    /// crash is re-derived at recovery from the durable schedule and acknowledgements and sent
    /// again with the same firing id (`FiringID(reminder:dueAt:)`), which subscribers
    /// deduplicate on. Replies (and badge events) still wait: an acknowledged request is
    /// durable.
    /// - Throws: `JournalError` `.lockLost` when the store's lease lapsed before anything
    ///   leaves; the journal writer's error when a write failed; `ZeroMQError`.
    func carryOut(_ directives: [CoordinatorDirective], _ sockets: LoopSockets) throws {
        guard !directives.isEmpty else { return }
        try checkLeaseBeforeSending()
        var entries: [JournalEntry] = []
        // Replies to requests with a `requestId` were encoded once, for their `answered` entry.
        var answeredReplies: [String: Data] = [:]
        for directive in directives {
            switch directive {
            case .append(let entry):
                entries.append(entry)
                if case .answered(let requestId, let reply, _, _) = entry { answeredReplies[requestId] = reply }
            case .dispatch(let batch, let worker):
                send(batch, to: worker, on: sockets.dispatch)
            default:
                continue
            }
        }
        // Replies and events follow every entry submitted so far (read-your-writes).
        let ticket = submit(entries)
        for directive in directives {
            switch directive {
            case .append, .dispatch:
                continue
            case .publish(let event):
                outbox.appendEvent(event, after: ticket)
            case .reply(let outcome, let requestId, let client):
                if let body = requestId.flatMap({ answeredReplies[$0] }) {
                    outbox.append(.reply(body, to: client), after: ticket)
                } else {
                    outbox.appendReply(outcome, requestId: requestId, to: client, after: ticket)
                }
            case .replyEncoded(let body, let client):
                outbox.append(.reply(body, to: client), after: ticket)
            case .replyAtOnce(let body, let client):
                outbox.append(.reply(body, to: client), after: 0)
            case .serveStoreRequest(let request, let client):
                try serveStoreRequest(request, from: client)
            case .reportStore(let requestId, let client, let snapshotMilliseconds, let journal):
                var report = storeReport(snapshotMilliseconds: snapshotMilliseconds)
                if let journal {
                    // The journal's figures as the writer left them (the loop does not read the
                    // journal while that thread may write).
                    report.journalBytes = journal.bytes
                    report.segments = journal.segments
                }
                outbox.append(.reply(outbox.codec.encode(ControlReply(requestId: requestId, result: report)), to: client), after: 0)
            case .writeSnapshot:
                startSnapshot()
            case .removeSegments(let sequence, let isCompaction):
                removeSegments(through: sequence, isCompaction: isCompaction)
            case .readMapRegister:
                requestFreshMapRead()
            }
        }
        try flushOutbox(sockets)
    }

    /// Hands `entries` to the journal (the writer thread, or memory).
    /// - Returns: the ticket replies and events of this turn wait for (0 without a file store:
    ///   nothing waits).
    private func submit(_ entries: [JournalEntry]) -> UInt64 {
        var ticket: UInt64 = 0
        switch store.storage {
        case .memory(var journal):
            if !entries.isEmpty {
                journal.append(entries)
                store.storage = .memory(journal)
            }
        case .file:
            if let journalWriter = store.journalWriter {
                ticket = entries.isEmpty ? journalWriter.lastSubmitted : journalWriter.submit(entries, allowance: inlineAllowance())
            }
        }
        telemetry.recordsSinceMemoryTrim += entries.count
        return ticket
    }

    /// How long this turn can spare for an `fdatasync` on the loop (`fsync: always`): until
    /// the next firing or lease expiry is due. Firings would otherwise wait behind the disk,
    /// so with one due now (a burst) every fsync stays on the journal writer thread.
    func inlineAllowance() -> JournalWriter.InlineAllowance {
        guard let wake = state.nextWake else { return .unlimited }
        let spare = wake.timeIntervalSince(clock.now)
        return spare > 0 ? .seconds(spare) : .none
    }

    /// Hands a batch to one worker; a worker that is gone or full (its queue at the dispatch
    /// high-water mark, or holding `limits.dispatchQueueBytesPerConnection` it has not read:
    /// ``ConnectionBacklog/mayHandOver(to:at:probe:)``) gets it back into the line.
    func send(_ batch: DispatchBatch, to worker: WorkerID, on dispatch: Socket) {
        let routingID = inbound.workerRoutes.routingID(for: worker)
        do {
            if outbox.dispatchBacklog.mayHandOver(to: [routingID], at: clock.monotonic, probe: SystemConnectionProbe()) {
                let frames = outbox.codec.encodeFrames(batch)
                if try dispatch.send([routingID] + frames, dontWait: true) {
                    outbox.dispatchBacklog.onSent(to: [routingID], bytes: frames.reduce(routingID.count) { $0 + $1.count })
                    return
                }
                logger.warning("worker queue full; firings wait", ["worker": "\(worker.rawValue)", "firings": .int(batch.firings.count)])
            } else {
                telemetry.operatorLog.heldDispatches.record(1, examples: [worker.rawValue], metadata: [:])
            }
        } catch let error as ZeroMQError where error.code == .hostUnreachable {
            logger.warning("worker not connected; firings wait", ["worker": worker.rawValue])
        } catch {
            logger.error("dispatch failed", ["worker": worker.rawValue, "error": "\(error)"])
        }
        state.onDispatchFailed(batch, to: worker, at: clock.now, monotonic: clock.monotonic)
    }

    /// Sends the waiting replies and events whose journal entries are durable, in order
    /// (``Outbox/takeReady(durable:)``), after noticing a change of the store-full mode.
    /// - Throws: the journal writer's error, when a write or fsync failed (the coordinator
    ///   then stops: it cannot promise durability); `.lockLost` when the lease lapsed.
    func flushOutbox(_ sockets: LoopSockets) throws {
        // Asked every turn, so a failed write stops the coordinator even when no reply waits.
        var durable = UInt64.max
        if let journalWriter = store.journalWriter {
            let status = try fencing { try journalWriter.status() }
            durable = status.durableTicket
            if status.isStoreFull != state.isStoreFull { noteStoreMode(isFull: status.isStoreFull) }
        }
        guard !outbox.isEmpty else { return }
        try checkLeaseBeforeSending()
        for message in outbox.takeReady(durable: durable) {
            switch message {
            case .reply(let body, let client):
                sendReply(body, to: client, on: sockets.control)
            case .event(let topic, let body):
                // PUB drops at its high-water mark rather than block the loop; badge state is
                // durable and `chime delivered` / `recipient` show it.
                _ = try sockets.events.send([Data(topic.utf8), body], dontWait: true)
            }
        }
    }

    /// Sends one reply without waiting. A reply its connection's full queue refuses (the
    /// control ROUTER is `ZMQ_ROUTER_MANDATORY`) is dropped and the connection stalled
    /// (``UnreadReplies``); one to a connection that is gone is dropped. The client sends the
    /// request again with the same `requestId` and gets the remembered reply.
    func sendReply(_ body: Data, to client: ClientAddress, on control: Socket) {
        do {
            if try control.send(client.routing + [body], dontWait: true) {
                outbox.unread.onReplySent(to: client.routing)
                outbox.replyBacklog.onSent(to: client.routing, bytes: body.count)
                boundReplyBacklog()
            } else {
                outbox.unread.onReplyRefused(to: client.routing, at: clock.monotonic)
            }
        } catch let error as ZeroMQError where error.code == .hostUnreachable {
            // Gone before its reply (common: a CLI that timed out): nothing to tell anyone.
            outbox.unread.onDisconnected(client.routing)
            outbox.replyBacklog.onDisconnected(client.routing)
        } catch {
            logger.warning("reply not sent", ["error": "\(error)"])
        }
    }

    /// Serves a store operation now that every entry submitted so far was handed to the
    /// journal writer: waits until they are durable (the store is read, and a snapshot must
    /// match the journal), then answers `store` (and anything without a file store) with the
    /// store's figures, or refuses it `store_full` when the disk filled after it was accepted
    /// (the writer is not idle, so the store cannot be read or snapshotted now); a `snapshot`
    /// or `compact` waits for the next snapshot (``CoordinatorState/onSnapshotAwaited(_:from:)``).
    /// - Throws: the journal writer's error when a write failed other than for want of space.
    func serveStoreRequest(_ request: ControlRequest, from client: ClientAddress) throws {
        var isFull = false
        do {
            try store.journalWriter?.drain()
        } catch let error as JournalError where error.code == .noSpace {
            isFull = true
        }
        if isFull {
            outbox.append(.reply(CoordinatorState.storeFullRefusal(of: request), to: client), after: 0)
            return
        }
        if case .file = store.storage, request.operation == .snapshot || request.operation == .compact {
            state.onSnapshotAwaited(request, from: client)
            return
        }
        let body = outbox.codec.encode(ControlReply(requestId: request.requestId, result: storeReport(snapshotMilliseconds: nil)))
        // Every earlier entry is durable: it leaves behind the replies queued before it.
        outbox.append(.reply(body, to: client), after: store.journalWriter?.lastSubmitted ?? 0)
    }

    /// The store's figures for `store`, `snapshot` and `compact` replies.
    func storeReport(snapshotMilliseconds: Double?) -> StoreReport {
        switch store.storage {
        case .memory(let journal):
            return StoreReport(
                directory: nil, fsync: "none", epoch: state.identity.epoch, journalBytes: 0, segments: 0,
                snapshots: 0, snapshotBytes: 0, snapshotSequence: nil, appendedRecords: journal.appendedCount,
                lastFsyncMilliseconds: nil)
        case .file(let fileStore):
            // While the journal writer runs, the journal is its thread's: read its copy.
            let statistics = store.journalWriter.map { fileStore.statistics(journal: $0.statistics) } ?? fileStore.statistics
            return StoreReport(
                directory: fileStore.directory.path, fsync: configuration.store.fsync, epoch: state.identity.epoch,
                journalBytes: statistics.journalBytes, segments: statistics.segmentCount,
                snapshots: statistics.snapshotCount, snapshotBytes: statistics.snapshotBytes,
                snapshotSequence: statistics.newestSnapshotSequence, appendedRecords: statistics.journal.appendedEntries,
                lastFsyncMilliseconds: statistics.lastFsyncLatency.map { $0 * 1000 },
                snapshotMilliseconds: snapshotMilliseconds)
        }
    }
}
