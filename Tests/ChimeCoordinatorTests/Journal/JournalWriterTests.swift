import ChimeJournal
import ChimeStore
import ChimeTestSupport
import Foundation
import Testing
import ZeroMQ
@testable import ChimeCoordinator

/// The journal writer's hand-over between the loop's thread (a lone submission written inline
/// while the writer thread is idle) and its own thread: order, durability, the `interval`
/// fsync, and the full-disk mode.
@Suite(.serialized) struct JournalWriterTests {
    /// A writer over a store in `directory`, with the loop's end of the signal pipe.
    final class Harness {
        let context: Context
        let signal: Socket
        let store: FileStore
        let writer: JournalWriter

        init(directory: URL, fsync: FsyncPolicy, maxInlineFsyncSeconds: Double = 60) throws {
            context = try Context()
            signal = try Socket(.pull, context: context)
            try signal.set(.linger(milliseconds: 0))
            let endpoint = "inproc://journal-writer-test-\(UUID().uuidString)"
            try signal.bind(to: endpoint)
            store = try FileStore.open(directory: directory, fsync: fsync).store
            writer = try JournalWriter(
                store: store, context: context, signalEndpoint: endpoint, maxInlineFsyncSeconds: maxInlineFsyncSeconds,
                maxInlineWriteSeconds: 60)
        }

        /// Stops the writer, closes the store and the socket.
        func close() throws {
            writer.stop()
            try store.close()
            signal.close()
        }
    }

    /// Entries whose `through` numbers name their submission order.
    static func entries(_ range: Range<Int>) -> [JournalEntry] {
        range.map { .seqReserved(through: UInt64($0)) }
    }

    /// The `through` numbers of every entry in the store at `directory`, in journal order.
    static func journaled(in directory: URL) throws -> [Int] {
        let (store, recovery) = try FileStore.open(directory: directory, fsync: .never)
        defer { try? store.close() }
        return recovery.entries.compactMap { entry in
            if case .seqReserved(let through) = entry { return Int(through) }
            return nil
        }
    }

    @Test func aLoneSubmissionToAnIdleWriterIsWrittenBeforeSubmitReturns() throws {
        let directory = try TemporaryDirectory(prefix: "journal-writer")
        defer { directory.remove() }
        let harness = try Harness(directory: directory.url, fsync: .interval(milliseconds: 60_000))
        let ticket = harness.writer.submit(Self.entries(0..<2))
        #expect(try harness.writer.status().durableTicket == ticket)
        #expect(harness.writer.inlineWriteCount == 1)
        // Written (it survives `kill -9`), not fsynced: the interval has not passed.
        #expect(harness.store.journal.statistics.writtenSequence == harness.store.journal.lastSequence)
        #expect(harness.store.journal.hasUnsyncedWrites)
        try harness.close()
        #expect(try Self.journaled(in: directory.url) == [0, 1])
    }

    @Test func entriesStayInSubmissionOrderAcrossTheHandOver() throws {
        let directory = try TemporaryDirectory(prefix: "journal-writer")
        defer { directory.remove() }
        let harness = try Harness(directory: directory.url, fsync: .interval(milliseconds: 5))
        var next = 0
        var tickets: [UInt64] = []
        for round in 0..<40 {
            // Idle writer: the lone submission is written inline, deterministically.
            try harness.writer.drain()
            let inlineBefore = harness.writer.inlineWriteCount
            tickets.append(harness.writer.submit(Self.entries(next..<(next + 1))))
            next += 1
            #expect(harness.writer.inlineWriteCount == inlineBefore + 1)
            #expect(try harness.writer.status().durableTicket == tickets.last)
            // Too many for inline: queued for the writer thread; the lone ones right behind it
            // must wait for it (queued), or, once it is done, may go inline.
            let large = 2_000 + round * 10
            tickets.append(harness.writer.submit(Self.entries(next..<(next + large))))
            next += large
            for _ in 0..<3 {
                tickets.append(harness.writer.submit(Self.entries(next..<(next + 2))))
                next += 2
            }
        }
        #expect(tickets == Array(1...UInt64(tickets.count)))
        try harness.writer.drain()
        #expect(try harness.writer.status().durableTicket == UInt64(tickets.count))
        #expect(harness.writer.undurableCount == 0)
        try harness.close()
        #expect(try Self.journaled(in: directory.url) == Array(0..<next))
    }

    @Test func underAlwaysAnInlineWriteIsFsyncedOnlyWhenTheCallerCanSpareIt() throws {
        let directory = try TemporaryDirectory(prefix: "journal-writer")
        defer { directory.remove() }
        let harness = try Harness(directory: directory.url, fsync: .always)
        let fsyncsBefore = harness.store.journal.statistics.fsyncCount

        // No time to spare (a firing is due now): the writer thread writes and fsyncs.
        let queued = harness.writer.submit(Self.entries(0..<1), allowance: .none)
        #expect(harness.writer.inlineWriteCount == 0)
        try harness.writer.drain()
        #expect(try harness.writer.status().durableTicket == queued)
        #expect(harness.store.journal.statistics.fsyncCount == fsyncsBefore + 1)

        // Time to spare: written and fsynced before submit returns.
        let inline = harness.writer.submit(Self.entries(1..<3), allowance: .unlimited)
        #expect(harness.writer.inlineWriteCount == 1)
        #expect(try harness.writer.status().durableTicket == inline)
        let statistics = harness.store.journal.statistics
        #expect(statistics.fsyncCount == fsyncsBefore + 2)
        #expect(statistics.durableSequence == harness.store.journal.lastSequence)
        #expect(!harness.store.journal.hasUnsyncedWrites)

        // Less time than an fsync is worth (twice the last one plus a millisecond): queued.
        _ = harness.writer.submit(Self.entries(3..<4), allowance: .seconds(JournalWriter.InlineAllowance.fsyncMargin / 2))
        #expect(harness.writer.inlineWriteCount == 1)
        try harness.writer.drain()
        try harness.close()
        #expect(try Self.journaled(in: directory.url) == [0, 1, 2, 3])
    }

    @Test func underIntervalTheWriterThreadFsyncsInlineWritesOnceTheIntervalHasPassed() throws {
        let directory = try TemporaryDirectory(prefix: "journal-writer")
        defer { directory.remove() }
        let harness = try Harness(directory: directory.url, fsync: .interval(milliseconds: 20))
        let fsyncsBefore = harness.store.journal.statistics.fsyncCount
        _ = harness.writer.submit(Self.entries(0..<1))
        #expect(harness.writer.inlineWriteCount == 1)
        #expect(harness.store.journal.hasUnsyncedWrites)
        try expectEventually(timeout: 5, "the inline write fsynced by the writer thread") {
            // The loop asks once a turn.
            harness.writer.requestFsyncIfDue()
            try harness.writer.drain()
            return !harness.store.journal.hasUnsyncedWrites
        }
        let statistics = harness.store.journal.statistics
        #expect(statistics.fsyncCount == fsyncsBefore + 1)
        #expect(statistics.durableSequence == harness.store.journal.lastSequence)
        try harness.close()
    }

    @Test func aFullDiskMetByAnInlineWriteIsTheStoreFullModeAndEndsWhenSpaceReturns() throws {
        let temporary = try TemporaryDirectory(prefix: "journal-writer-full")
        defer { temporary.remove() }
        let tmpfs: Tmpfs
        do {
            tmpfs = try Tmpfs(at: temporary.path("mnt"), size: "64k")
        } catch let unavailable as TmpfsUnavailable {
            print("journal writer full-disk test skipped: \(unavailable.reason)")
            return
        }
        let directory = URL(fileURLWithPath: tmpfs.path).appendingPathComponent("store")
        let harness = try Harness(directory: directory, fsync: .always)
        func answered(_ index: Int) -> [JournalEntry] {
            [.answered(requestId: "r\(index)", reply: Data(repeating: 0x61, count: 1_000), at: Date(timeIntervalSince1970: 0))]
        }
        var last: UInt64 = 0
        var index = 0
        while !(try harness.writer.status().isStoreFull) && index < 200 {
            try harness.writer.drain()
            last = harness.writer.submit(answered(index), allowance: .unlimited)
            index += 1
        }
        try #require(try harness.writer.status().isStoreFull, "64 KiB filled up")
        let status = try harness.writer.status()
        #expect(status.durableTicket == last - 1, "the submission that met the full disk is not durable")
        #expect(throws: JournalError(.noSpace)) { try harness.writer.drain() }
        // Behind the unwritten entries, never beside them: queued for the writer thread.
        let inlineBefore = harness.writer.inlineWriteCount
        last = harness.writer.submit(answered(index), allowance: .unlimited)
        index += 1
        #expect(harness.writer.inlineWriteCount == inlineBefore)
        #expect(try harness.writer.status().durableTicket < last)

        try tmpfs.resize(to: "4m")
        try expectEventually(timeout: 10, "the writer thread writes the kept entries once space returns") {
            let status = try harness.writer.status()
            return status.durableTicket == last && !status.isStoreFull
        }
        try harness.writer.drain()
        #expect(harness.writer.undurableCount == 0)
        try harness.close()
        let (store, recovery) = try FileStore.open(directory: directory, fsync: .never)
        defer { try? store.close() }
        let requestIds = recovery.entries.compactMap { entry -> String? in
            if case .answered(let requestId, _, _, _) = entry { return requestId }
            return nil
        }
        #expect(requestIds == (0..<index).map { "r\($0)" })
    }
}
