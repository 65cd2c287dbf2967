import ChimeCore
import ChimeJournal
import ChimeStore
import Foundation
import Testing

@testable import ChimeCoordinator

/// The journal's group commit as a value: no thread, no disk, time passed in.
@Suite struct GroupCommitTests {
    static let t0 = ContinuousClock.now
    static let full = JournalError(.noSpace, path: "/store", message: "no space")

    static func entries(_ count: Int) -> [JournalEntry] {
        (0..<count).map { .cancelled([ReminderKey(ReminderID("r\($0)"), of: "alice")], at: Date(timeIntervalSince1970: Double($0))) }
    }

    static func commit(_ policy: FsyncPolicy = .always, fsyncSeconds: Double = 0) -> GroupCommit {
        var commit = GroupCommit(policy: policy, lastSequence: 10, inlineFsyncLimit: 0.005, now: t0)
        if fsyncSeconds > 0 {
            // One inline write teaches it the disk's fsync latency.
            guard case .inline(let ticket, _) = commit.submit(entries(1), allowance: .unlimited) else { return commit }
            _ = commit.finishInlineWrite(
                .written(fsyncSeconds: fsyncSeconds, hasUnsyncedWrites: false), count: 1, ticket: ticket, now: t0)
        }
        return commit
    }

    /// A situation before one more submission of `count` entries.
    struct InlineCase: CustomTestStringConvertible, Sendable {
        var name: String
        var policy: FsyncPolicy = .always
        var fsyncSeconds = 0.0
        var count = 1
        var allowance: GroupCommit.InlineAllowance = .unlimited
        var before: @Sendable (inout GroupCommit) -> Void = { _ in }
        /// `nil`: queued; else inline with this fsync.
        var inlineFsync: Bool?
        var testDescription: String { name }
    }

    static let inlineCases: [InlineCase] = [
        InlineCase(name: "idle writer, always, time to spare", inlineFsync: true),
        InlineCase(name: "more than 64 entries", count: 65, inlineFsync: nil),
        InlineCase(name: "exactly 64 entries", count: 64, inlineFsync: true),
        InlineCase(name: "entries queued", before: { _ = $0.submit(entries(65), allowance: .unlimited) }, inlineFsync: nil),
        InlineCase(
            name: "the writer is writing",
            before: {
                _ = $0.submit(entries(65), allowance: .unlimited)
                _ = $0.nextStep(now: t0)
            }, inlineFsync: nil),
        InlineCase(name: "stopping", before: { $0.stop() }, inlineFsync: nil),
        InlineCase(
            name: "the disk is full",
            before: {
                guard case .inline(let ticket, _) = $0.submit(entries(1), allowance: .unlimited) else { return }
                _ = $0.finishInlineWrite(.noSpace(full), count: 1, ticket: ticket, now: t0)
            }, inlineFsync: nil),
        InlineCase(
            name: "a write failed",
            before: {
                guard case .inline(let ticket, _) = $0.submit(entries(1), allowance: .unlimited) else { return }
                _ = $0.finishInlineWrite(.failed(CocoaError(.fileWriteUnknown)), count: 1, ticket: ticket, now: t0)
            }, inlineFsync: nil),
        InlineCase(
            name: "an interval fsync is requested", policy: .interval(milliseconds: 100),
            before: {
                guard case .inline(let ticket, _) = $0.submit(entries(1), allowance: .none) else { return }
                _ = $0.finishInlineWrite(.written(fsyncSeconds: nil, hasUnsyncedWrites: true), count: 1, ticket: ticket, now: t0)
                _ = $0.requestFsyncIfDue(now: t0 + .milliseconds(100))
            }, inlineFsync: nil),
        InlineCase(name: "always, fsync slower than 5 ms", fsyncSeconds: 0.006, inlineFsync: nil),
        InlineCase(name: "always, fsync 4 ms", fsyncSeconds: 0.004, inlineFsync: true),
        InlineCase(name: "always, no time to spare", allowance: .none, inlineFsync: nil),
        InlineCase(name: "always, 2 × 1 ms + 1 ms fits in 3 ms", fsyncSeconds: 0.001, allowance: .seconds(0.003), inlineFsync: true),
        InlineCase(name: "always, 2 × 1 ms + 1 ms does not fit in 2.9 ms", fsyncSeconds: 0.001, allowance: .seconds(0.0029), inlineFsync: nil),
        InlineCase(name: "interval writes inline without fsync", policy: .interval(milliseconds: 100), allowance: .none, inlineFsync: false),
        InlineCase(name: "never writes inline without fsync", policy: .never, allowance: .none, inlineFsync: false),
        InlineCase(
            name: "interval, the last write took 2.1 ms (a disk busy with writeback)", policy: .interval(milliseconds: 100),
            allowance: .none, before: { lastWrite(took: 0.0021, &$0) }, inlineFsync: nil),
        InlineCase(
            name: "always, the last write took 2.1 ms", before: { lastWrite(took: 0.0021, &$0) }, inlineFsync: nil),
        InlineCase(
            name: "interval, the last write took exactly 2 ms", policy: .interval(milliseconds: 100), allowance: .none,
            before: { lastWrite(took: 0.002, &$0) }, inlineFsync: false),
        InlineCase(
            name: "interval, a slow write then a fast one by the writer thread", policy: .interval(milliseconds: 100),
            allowance: .none,
            before: {
                lastWrite(took: 0.030, &$0)
                lastWrite(took: 0.0001, &$0)
            }, inlineFsync: false),
    ]

    /// One submission of 65 entries (never inline) written by the writer thread in `seconds`.
    static func lastWrite(took seconds: Double, _ commit: inout GroupCommit) {
        _ = commit.submit(entries(65), allowance: .unlimited)
        guard case .write(let batch) = commit.nextStep(now: t0) else { return }
        _ = commit.finishBatch(
            .written(fsyncSeconds: nil, hasUnsyncedWrites: false, writeSeconds: seconds), batch: batch, now: t0)
    }

    @Test(arguments: inlineCases)
    func whenTheLoopMayWriteInline(_ situation: InlineCase) {
        var commit = Self.commit(situation.policy, fsyncSeconds: situation.fsyncSeconds)
        situation.before(&commit)
        let ticket = commit.submitted + 1
        let decision = commit.submit(Self.entries(situation.count), allowance: situation.allowance)
        if let fsync = situation.inlineFsync {
            #expect(decision == .inline(ticket: ticket, fsync: fsync))
            #expect(commit.isWriting)
        } else {
            #expect(decision == .queued(ticket: ticket))
        }
    }

    @Test func theWriterTakesEverythingQueuedAsOneBatchAndItsTicketsBecomeDurableTogether() {
        var commit = Self.commit()
        let first = commit.submit(Self.entries(65), allowance: .none)
        let second = commit.submit(Self.entries(2), allowance: .none)
        #expect(first == .queued(ticket: 1))
        #expect(second == .queued(ticket: 2))
        #expect(commit.submittedSequence == 10 + 67)
        guard case .write(let batch) = commit.nextStep(now: Self.t0) else { Issue.record("no batch"); return }
        #expect(batch.entries.count == 67)
        #expect(batch.through == 2)
        let third = commit.submit(Self.entries(1), allowance: .unlimited)
        #expect(third == .queued(ticket: 3), "written meanwhile: queued")
        guard case .wait(nil) = commit.nextStep(now: Self.t0) else { Issue.record("one writer at a time"); return }
        #expect(!commit.isSettled(ticket: 1))
        let aftermath = commit.finishBatch(.written(fsyncSeconds: 0.002, hasUnsyncedWrites: false), batch: batch, now: Self.t0)
        #expect(aftermath == GroupCommit.Aftermath(signalsLoop: true, exits: false))
        #expect(commit.durable == 2)
        #expect(commit.undurable == 1)
        #expect(commit.recentFsyncSeconds == 0.002)
        #expect(commit.isSettled(ticket: 2) && !commit.isSettled(ticket: 3))
        #expect(!commit.isDrained)
    }

    @Test func aFullDiskKeepsTheEntriesRetriesEveryQuarterSecondAndEndsWithTheFirstWriteThatFits() {
        var commit = Self.commit()
        _ = commit.submit(Self.entries(70), allowance: .none)
        guard case .write(let first) = commit.nextStep(now: Self.t0) else { Issue.record("no batch"); return }
        let full = commit.finishBatch(.noSpace(Self.full), batch: first, now: Self.t0)
        #expect(full == .init(signalsLoop: true, exits: false))
        #expect(commit.carried == 70 && commit.undurable == 70 && commit.noSpace != nil)
        #expect(commit.isSettled(ticket: 1) && commit.isDrained, "waiters are told, not kept waiting")
        guard case .wait(let deadline) = commit.nextStep(now: Self.t0 + .milliseconds(100)) else { Issue.record("retried early"); return }
        #expect(deadline == Self.t0 + .milliseconds(250))
        _ = commit.submit(Self.entries(3), allowance: .unlimited)
        guard case .write(let retry) = commit.nextStep(now: Self.t0 + .milliseconds(100)) else {
            Issue.record("new entries go with the retry"); return
        }
        #expect(retry.entries.count == 3 && retry.wasFull)
        let stillFull = commit.finishBatch(.noSpace(Self.full), batch: retry, now: Self.t0 + .milliseconds(100))
        #expect(stillFull == .init(signalsLoop: false, exits: false))
        #expect(commit.carried == 73)
        guard case .write(let again) = commit.nextStep(now: Self.t0 + .milliseconds(350)) else { Issue.record("no retry"); return }
        #expect(again.entries.isEmpty && again.through == 2)
        _ = commit.finishBatch(.written(fsyncSeconds: 0.001, hasUnsyncedWrites: false), batch: again, now: Self.t0 + .milliseconds(350))
        #expect(commit.durable == 2 && commit.carried == 0 && commit.undurable == 0 && commit.noSpace == nil)
        #expect(commit.retryAt == nil)
    }

    @Test func aStartOnAFullStoreRetriesAfterTheInterval() {
        var commit = GroupCommit(
            policy: .always, lastSequence: 5, inlineFsyncLimit: 0.005, unwrittenEntries: 4, noSpace: Self.full, now: Self.t0)
        #expect(commit.undurable == 4 && commit.noSpace != nil)
        guard case .wait(Self.t0 + .milliseconds(250)) = commit.nextStep(now: Self.t0) else { Issue.record("no timer"); return }
        guard case .write(let retry) = commit.nextStep(now: Self.t0 + .milliseconds(250)) else { Issue.record("no retry"); return }
        _ = commit.finishBatch(.written(fsyncSeconds: nil, hasUnsyncedWrites: false), batch: retry, now: Self.t0)
        #expect(commit.undurable == 0 && commit.noSpace == nil)
    }

    @Test func underIntervalTheFsyncIsAskedForOnceTheWrittenRecordsWaitedAndTheWriterIsIdle() {
        var commit = Self.commit(.interval(milliseconds: 100))
        guard case .inline(let ticket, false) = commit.submit(Self.entries(1), allowance: .none) else { Issue.record("not inline"); return }
        _ = commit.finishInlineWrite(.written(fsyncSeconds: nil, hasUnsyncedWrites: true), count: 1, ticket: ticket, now: Self.t0)
        #expect(commit.unsyncedSince == Self.t0)
        let early = commit.requestFsyncIfDue(now: Self.t0 + .milliseconds(99))
        let due = commit.requestFsyncIfDue(now: Self.t0 + .milliseconds(100))
        let again = commit.requestFsyncIfDue(now: Self.t0 + .milliseconds(200))
        #expect(!early && due)
        #expect(!again, "asked once")
        #expect(!commit.isDrained, "a requested fsync is under way")
        guard case .write(let fsync) = commit.nextStep(now: Self.t0 + .milliseconds(100)) else { Issue.record("no fsync"); return }
        #expect(fsync.entries.isEmpty)
        // The journal's own clock said "not yet": asked again one interval later.
        _ = commit.finishBatch(.written(fsyncSeconds: nil, hasUnsyncedWrites: true), batch: fsync, now: Self.t0 + .milliseconds(100))
        #expect(commit.unsyncedSince == Self.t0 + .milliseconds(100))
        #expect(commit.isDrained)
        var always = Self.commit(.always)
        var never = Self.commit(.never)
        let asked = always.requestFsyncIfDue(now: Self.t0 + .seconds(10)) || never.requestFsyncIfDue(now: Self.t0 + .seconds(10))
        #expect(!asked, "only interval asks")
    }

    @Test func stoppingWritesWhatIsQueuedThenEnds() {
        var commit = Self.commit()
        _ = commit.submit(Self.entries(70), allowance: .none)
        commit.stop()
        guard case .write(let last) = commit.nextStep(now: Self.t0) else { Issue.record("queue dropped"); return }
        #expect(last.entries.count == 70 && last.isLastAttempt)
        _ = commit.finishBatch(.written(fsyncSeconds: nil, hasUnsyncedWrites: false), batch: last, now: Self.t0)
        guard case .exit = commit.nextStep(now: Self.t0) else { Issue.record("did not end"); return }
    }

    @Test func stoppingOnAFullDiskTriesOnceMoreThenGivesUp() {
        var commit = Self.commit()
        _ = commit.submit(Self.entries(70), allowance: .none)
        guard case .write(let first) = commit.nextStep(now: Self.t0) else { Issue.record("no batch"); return }
        _ = commit.finishBatch(.noSpace(Self.full), batch: first, now: Self.t0)
        commit.stop()
        guard case .write(let last) = commit.nextStep(now: Self.t0), last.isLastAttempt else {
            Issue.record("no last attempt before the retry timer"); return
        }
        let aftermath = commit.finishBatch(.noSpace(Self.full), batch: last, now: Self.t0)
        #expect(aftermath.exits)
    }

    @Test func abandoningDropsTheQueueAndEnds() {
        var commit = Self.commit()
        _ = commit.submit(Self.entries(70), allowance: .none)
        commit.abandon()
        guard case .exit = commit.nextStep(now: Self.t0) else { Issue.record("wrote after abandon"); return }
    }

    @Test func aFailedWriteEndsTheWriterAndEveryWaitIsSettled() {
        var commit = Self.commit()
        _ = commit.submit(Self.entries(70), allowance: .none)
        guard case .write(let batch) = commit.nextStep(now: Self.t0) else { Issue.record("no batch"); return }
        let aftermath = commit.finishBatch(.failed(CocoaError(.fileWriteUnknown)), batch: batch, now: Self.t0)
        #expect(aftermath == GroupCommit.Aftermath(signalsLoop: true, exits: true))
        #expect(commit.failure != nil && commit.isSettled(ticket: 1) && commit.isDrained)
        #expect(commit.durable == 0)
    }

    @Test func aSegmentRemovalRidesTheNextBatchAndTheNewestSequenceWins() {
        var commit = Self.commit()
        let first = commit.requestRemoval(through: 40)
        let second = commit.requestRemoval(through: 30)
        #expect(first == 1 && second == 2)
        guard case .write(let batch) = commit.nextStep(now: Self.t0) else { Issue.record("no batch"); return }
        #expect(batch.removal?.through == 40 && batch.removal?.number == 2)
        #expect(batch.entries.isEmpty)
        guard case .wait(nil) = commit.nextStep(now: Self.t0) else { Issue.record("removal taken twice"); return }
    }
}
