import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing
import ZeroMQ
@testable import ChimeCoordinator


/// The snapshot thread: it writes the state as it was handed over, whatever the loop changes
/// meanwhile; one snapshot at a time; a store whose `LOCK` was replaced gets no file.
@Suite struct SnapshotWriterTests {
    static let noon = CoordinatorRecoveryTests.noon
    let helpers = CoordinatorRecoveryTests()

    /// A writer on a fresh store, with the loop's PULL socket it signals.
    func withWriter(_ body: (SnapshotWriter, FileStore, Socket) throws -> Void) throws {
        let directory = try TemporaryDirectory(prefix: "snapshot-writer")
        let (store, _) = try FileStore.open(directory: directory.url)
        defer { try? store.close() }
        let context = try Context()
        defer { context.shutdown() }
        let signal = try Socket(.pull, context: context)
        defer { signal.close() }
        try signal.set(.linger(milliseconds: 0))
        try signal.set(.receiveTimeout(milliseconds: 30_000))
        let endpoint = "inproc://snapshot-writer-\(UUID().uuidString)"
        try signal.bind(to: endpoint)
        let journalWriter = try JournalWriter(store: store, context: context, signalEndpoint: endpoint)
        defer { journalWriter.stop() }
        let writer = try SnapshotWriter(store: store, journalWriter: journalWriter, context: context, signalEndpoint: endpoint)
        defer { writer.stop() }
        try body(writer, store, signal)
    }

    func reminders(_ range: Range<Int>) -> [Reminder] {
        range.map { index in
            Reminder(
                id: ReminderID(String(format: "r%05d", index)), recipient: "alice", content: Content(body: "b\(index)"),
                trigger: Trigger(start: .instant(Self.noon.addingTimeInterval(86_400 + Double(index)))))
        }
    }

    @Test func theFileHoldsTheStateAsHandedOverWhateverChangesAfter() throws {
        try withWriter { writer, store, signal in
            var live = helpers.makeState()
            // One request of thousands fills the state (the default takes 1,000 a request).
            live.configuration.maxRemindersPerRequest = 10_000
            _ = helpers.schedule(&live, reminders(0..<5000), at: Self.noon)
            let handedOver = live
            #expect(writer.start(SnapshotWriter.Job(state: live, takenAt: Self.noon, coveringThrough: 42, ticket: 0)))
            // The loop goes on changing its state while the thread writes.
            _ = helpers.schedule(&live, reminders(5000..<6000), at: Self.noon)
            _ = live.onRequest(
                ControlRequest(command: .cancel(ReminderFilter(ids: (0..<100).map { ReminderID(String(format: "r%05d", $0)) }))),
                from: helpers.client, at: Self.noon)
            #expect(!writer.start(SnapshotWriter.Job(state: live, takenAt: Self.noon, coveringThrough: 43, ticket: 0)))
            #expect(try signal.receiveMessage() != nil)
            let outcome = try #require(writer.take())
            let file = try outcome.result.get()
            #expect(file.sequence == 42)
            #expect(!writer.isBusy)

            let loaded = try #require(store.snapshots.loadNewestValid().snapshot)
            #expect(loaded.sequence == 42)
            #expect(loaded.payload == handedOver.encodedSnapshot(at: Self.noon))
            #expect(outcome.bytes + SnapshotStore.headerLength == file.size)
            var fromFile = helpers.makeState()
            try fromFile.load(snapshot: loaded.payload)
            #expect(fromFile.reminderCount == 5000)
            #expect(live.reminderCount == 5900)
        }
    }

    @Test func aStoreWhoseLockWasReplacedGetsNoSnapshot() throws {
        try withWriter { writer, store, signal in
            var live = helpers.makeState()
            // One request of thousands fills the state (the default takes 1,000 a request).
            live.configuration.maxRemindersPerRequest = 10_000
            _ = helpers.schedule(&live, reminders(0..<10), at: Self.noon)
            let lockPath = store.directory.appendingPathComponent("LOCK").path
            try FileManager.default.removeItem(atPath: lockPath)
            #expect(FileManager.default.createFile(atPath: lockPath, contents: Data()))
            #expect(writer.start(SnapshotWriter.Job(state: live, takenAt: Self.noon, coveringThrough: 7, ticket: 0)))
            #expect(try signal.receiveMessage() != nil)
            let outcome = try #require(writer.take())
            #expect(throws: JournalError.self) { try outcome.result.get() }
            if case .failure(let error as JournalError) = outcome.result { #expect(error.code == .lockLost) }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: store.snapshots.directory.path)) ?? []
            #expect(names.filter { $0.hasPrefix("snap") }.isEmpty, "\(names)")
        }
    }

    @Test func waitReturnsTheOutcomeOfTheSnapshotUnderWay() throws {
        try withWriter { writer, _, _ in
            #expect(writer.wait() == nil)
            var live = helpers.makeState()
            // One request of thousands fills the state (the default takes 1,000 a request).
            live.configuration.maxRemindersPerRequest = 10_000
            _ = helpers.schedule(&live, reminders(0..<2000), at: Self.noon)
            #expect(writer.start(SnapshotWriter.Job(state: live, takenAt: Self.noon, coveringThrough: 9, ticket: 0)))
            let outcome = try #require(writer.wait())
            #expect(try outcome.result.get().sequence == 9)
            #expect(!writer.isBusy)
            #expect(writer.take() == nil)
        }
    }
}
