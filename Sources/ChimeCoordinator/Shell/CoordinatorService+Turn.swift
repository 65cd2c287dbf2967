import ChimeCore
import ChimeRuntime
import ChimeStore
import Foundation
import ZeroMQ

/// The loop's turn, in the order it runs: poll → read and decode → decide → carry out.
extension CoordinatorService {
    /// Serves turns until the stop signal (or until the context is terminated).
    /// - Throws: as `turn(_:poller:)`.
    func serve(_ sockets: LoopSockets) throws {
        let poller = sockets.makePoller()
        while !stop.isStopRequested {
            guard try turn(sockets, poller: poller) else { return }
        }
    }

    /// One loop turn: waits for input or the next due instant, reads and decodes what came
    /// in, lets the state decide (`onTick`), and carries its directives out.
    /// - Returns: `false` when the ZeroMQ context was terminated (the loop ends).
    /// - Throws: `JournalError` from the journal writer or the ownership checks
    ///   (see `run`); `ZeroMQError` other than a terminated context.
    func turn(_ sockets: LoopSockets, poller: Poller) throws -> Bool {
        // A journal writer far behind (a slow disk) pauses firing until it catches up; its
        // wake-up after each write ends the wait.
        let isJournalBehind = (store.journalWriter?.undurableCount ?? 0) >= setup.tunables.maxUndurableEntries
        guard try poll(poller, isJournalBehind: isJournalBehind) else { return false }
        // Before anything of this turn reaches the journal or a worker: one monotonic
        // reading a turn drives the watchdog, the stall check and the ownership check.
        let turnStart = ContinuousClock.now
        try superviseTurn(at: turnStart)
        probe.noteTurn(at: turnStart)
        takeMapReads()
        guard var directives = try readInbound(sockets, poller: poller) else { return false }
        directives += decide(isJournalBehind: isJournalBehind)
        guard try carryOutTurn(directives, sockets) else { return false }
        if let serving = inbound.serving {
            inbound.allowance.onTurn(served: serving.served, spent: ContinuousClock.now - serving.started)
            inbound.serving = nil
        }
        if telemetry.isMemoryTrimDue || isGrowthTrimDue(isIdle: directives.isEmpty) {
            telemetry.isMemoryTrimDue = false
            telemetry.recordsSinceMemoryTrim = 0
            Allocator.releaseFreePages()
        }
        forgetIdleUnreadConnections()
        boundReplyBacklog()
        boundDispatchBacklog()
        noteTurnDuration(since: turnStart)
        if probe.wantsMetrics { publishMetrics() }
        return true
    }

    /// Once a second at most: forgets the stalled control connections not heard of for a
    /// minute (``UnreadReplies/forgetIdle(at:)``; libzmq does not say when a peer goes).
    func forgetIdleUnreadConnections() {
        let now = clock.monotonic
        guard now - outbox.unreadSweptAt >= 1 else { return }
        outbox.unreadSweptAt = now
        outbox.unread.forgetIdle(at: now)
        outbox.replyBacklog.forgetIdle(at: now)
        outbox.dispatchBacklog.forgetIdle(at: now)
    }

    /// Keeps the replies all TCP control connections leave unread within
    /// `limits.controlQueueBytesTotal` (``ConnectionBacklog``): samples when due, and cuts off the
    /// connections behind longest (logged one line a second at most, with the count cut
    /// meanwhile).
    func boundReplyBacklog() {
        let now = clock.monotonic
        guard outbox.replyBacklog.isSampleDue(at: now) else { return }
        let cut = outbox.replyBacklog.sample(at: now, probe: SystemConnectionProbe())
        guard !cut.isEmpty else { return }
        for connection in cut { outbox.unread.onDisconnected(connection.routing) }
        telemetry.operatorLog.cutControlConnections.record(
            cut.count, examples: cut.prefix(LogRateWindow.maximumExamples).map { "\($0.bytes)" },
            metadata: ["unreadBytesLeft": .int(Int(clamping: outbox.replyBacklog.estimatedTotal))])
    }

    /// Keeps the batches all TCP worker connections leave unread within
    /// `limits.dispatchQueueBytesTotal` (``ConnectionBacklog``), as ``boundReplyBacklog()`` does
    /// for replies. A worker cut off reconnects; its leases run out and its firings go to
    /// workers that read.
    func boundDispatchBacklog() {
        let now = clock.monotonic
        guard outbox.dispatchBacklog.isSampleDue(at: now) else { return }
        let cut = outbox.dispatchBacklog.sample(at: now, probe: SystemConnectionProbe())
        guard !cut.isEmpty else { return }
        telemetry.operatorLog.cutDispatchConnections.record(
            cut.count, examples: cut.prefix(LogRateWindow.maximumExamples).map { "\($0.bytes)" },
            metadata: ["unreadBytesLeft": .int(Int(clamping: outbox.dispatchBacklog.estimatedTotal))])
    }

    /// Journal records after which an idle turn gives free heap pages back (`isGrowthTrimDue`).
    static let memoryTrimRecords = 20_000

    /// Whether this turn gives free heap pages back after a burst of changes: at least
    /// `memoryTrimRecords` journal records since the last trim, a turn that carried nothing
    /// out, and nothing due within 100 ms. Decoding a burst's requests, growing the state's
    /// tables and copying them for a snapshot free memory that glibc keeps mapped (a fixed
    /// 4 MiB mmap threshold puts the tables' shards in the heap): W4 1M held 744 MB after its
    /// ingest against 531 MB with these trims, each 0.2-2 ms (one of 21 ms) every 20,000 records
    /// (`Benchmarks/HISTORY.md`, issue 28 item 4).
    func isGrowthTrimDue(isIdle: Bool) -> Bool {
        guard isIdle, telemetry.recordsSinceMemoryTrim >= Self.memoryTrimRecords else { return false }
        return state.nextWake.map { $0.timeIntervalSince(clock.now) >= 0.1 } ?? true
    }

    /// Waits until a socket is ready, the journal writer reports, or the next firing is due
    /// (every 10 ms while the journal is behind).
    /// - Returns: `false` when the context was terminated.
    private func poll(_ poller: Poller, isJournalBehind: Bool) throws -> Bool {
        do {
            // Requests still queued from the last turn: serve them now, only reading what came meanwhile.
            let timeout = !inbound.fairQueue.isEmpty ? .zero : isJournalBehind ? .milliseconds(10) : pollTimeout(now: clock.now)
            _ = try poller.poll(timeout: timeout)
            return true
        } catch let error as ZeroMQError where error.code == .contextTerminated {
            return false
        }
    }

    /// Sends what became durable, then reads and decodes every ready control request,
    /// worker result and announcement into the state's directives. Only the sockets the
    /// last poll reported readable are read: `zmq_poll` reports a socket while any message
    /// (or the rest of one) waits, so what a turn leaves unread is reported again.
    /// - Returns: the directives; `nil` when the context was terminated.
    private func readInbound(_ sockets: LoopSockets, poller: Poller) throws -> [CoordinatorDirective]? {
        var directives: [CoordinatorDirective] = []
        func isReadable(_ index: Int) -> Bool { poller.events(at: index).contains(.readable) }
        do {
            if isReadable(LoopSockets.Polled.journalSignal) {
                while try sockets.journalSignal.receiveMessage(dontWait: true) != nil {}
            }
            try flushOutbox(sockets)
            let isControlReadable = isReadable(LoopSockets.Polled.control)
            if isControlReadable || !inbound.fairQueue.isEmpty {
                try readControl(sockets.control, isReadable: isControlReadable, into: &directives)
            }
            if isReadable(LoopSockets.Polled.results) { try readResults(sockets.results, into: &directives) }
            if isReadable(LoopSockets.Polled.dispatch) { try readAnnouncements(sockets.dispatch, into: &directives) }
        } catch let error as ZeroMQError where error.code == .contextTerminated {
            return nil
        }
        return directives
    }

    /// The state's decisions for the time now: firings due, leases expired, workers lost
    /// (none while the journal is behind).
    private func decide(isJournalBehind: Bool) -> [CoordinatorDirective] {
        noticeWallClockStep()
        return isJournalBehind ? [] : state.onTick(now: clock.now, monotonic: clock.monotonic)
    }

    /// Carries out the turn's directives (journal, dispatch, replies, store operations), then
    /// the store's upkeep: a finished snapshot or segment removal taken in, and a snapshot
    /// started when one is due.
    /// - Returns: `false` when the context was terminated.
    private func carryOutTurn(_ directives: [CoordinatorDirective], _ sockets: LoopSockets) throws -> Bool {
        logOperatorEvents(directives)
        // Every turn, idle ones too, and before this turn's drains (store requests, snapshots).
        store.journalWriter?.requestFsyncIfDue()
        do {
            try carryOut(directives, sockets)
            try carryOut(storeUpkeep(), sockets)
            return true
        } catch let error as ZeroMQError where error.code == .contextTerminated {
            return false
        }
    }

    /// After the last turn: answers what waits for the journal (its entries become durable,
    /// pages finish encoding) before the sockets close, and finishes snapshots.
    /// - Throws: the journal writer's error when its last write failed other than for want
    ///   of space.
    func finishServing(_ sockets: LoopSockets) throws {
        probe.enter(.stopping)
        notifier?.notifyStopping(status: "stopping: answering what the journal makes durable")
        if let journalWriter = store.journalWriter {
            do {
                try journalWriter.drain()
            } catch let error as JournalError where error.code == .noSpace {
                logger.warning(
                    "stopping with a full store: entries not yet written are lost as in a crash (no reply depending on them was sent; recovery redoes firings)",
                    ["unwritten": .int(journalWriter.undurableCount)])
            }
            outbox.encoder?.drain()
            do {
                try flushOutbox(sockets)
            } catch {
                logger.warning("replies not sent at shutdown", ["error": "\(error)"])
            }
            finishSnapshotsAtStop(sockets)
        }
        logger.info(
            "coordinator stopping",
            ["inFlight": .int(state.inFlightCount), "journalWritesOnLoop": .int(store.journalWriter?.inlineWriteCount ?? 0)])
    }

    /// Logs a step of the wall clock (the wall clock moved more than a second more or less
    /// than the monotonic one since the last turn). Due times follow the wall clock; leases
    /// and liveness run on the monotonic one, so the step moves neither.
    func noticeWallClockStep() {
        let current = (wall: clock.now, monotonic: clock.monotonic)
        defer { telemetry.previousClocks = current }
        guard let previous = telemetry.previousClocks else { return }
        let step = current.wall.timeIntervalSince(previous.wall) - (current.monotonic - previous.monotonic)
        if abs(step) > Self.wallClockStepThreshold {
            logger.warning(
                "wall clock stepped", ["seconds": .rounded(step, digits: 3), "now": "\(RFC3339.format(current.wall))"])
        }
    }

    /// The wall-clock step, in seconds, that `noticeWallClockStep` reports.
    static let wallClockStepThreshold = 1.0

    /// Messages a worker's connection to the dispatch socket may queue unread (heartbeats).
    static let dispatchReceiveHighWaterMark: Int32 = 64

    /// Until the next due firing or lease expiry, at most 100 ms so the stop flag is seen.
    ///
    /// `zmq_poll` counts whole milliseconds, so the loop polls until about 1 ms before a due
    /// time, then sleeps the rest with `nanosleep` (tens of microseconds of slack, no busy
    /// wait) and polls without blocking: sub-millisecond precision on a 2-core machine.
    func pollTimeout(now: Date) -> Duration {
        guard let wake = state.nextWake else { return .milliseconds(100) }
        let remaining = wake.timeIntervalSince(now)
        if remaining <= 0 { return .zero }
        if remaining < 0.002 {
            Thread.sleep(forTimeInterval: remaining)
            return .zero
        }
        let milliseconds = Int64(((min(0.1, remaining) - 0.001) * 1000).rounded(.down))
        return .milliseconds(milliseconds)
    }
}
