import ChimeCore
import ChimeDashboard
import ChimeWire
import Foundation
import Synchronization

/// A cluster of fixed answers for the page tests; records the actions performed.
final class FixedSource: DashboardSource {
    let overviewView: OverviewView
    let workersView: WorkersView
    let reminderPage: PageView<ReminderListing>
    let deadLetterPage: PageView<Firing>
    let performed = Mutex<[DashboardAction]>([])
    let registrations: [RecipientID: RecipientResult]

    init(
        overview: OverviewView, workers: WorkersView, reminders: PageView<ReminderListing>, deadLetters: PageView<Firing>,
        registrations: [RecipientID: RecipientResult] = [:]
    ) {
        self.registrations = registrations
        overviewView = overview
        workersView = workers
        reminderPage = reminders
        deadLetterPage = deadLetters
    }

    func overview() -> OverviewView { overviewView }
    func workers() -> WorkersView { workersView }
    func reminders(_ search: ReminderSearch) throws(WireError) -> PageView<ReminderListing> { reminderPage }
    func deadLetters(cursor: String?) throws(WireError) -> PageView<Firing> { deadLetterPage }
    func recipient(_ id: RecipientID) throws(WireError) -> RecipientResult? { registrations[id] }
    func perform(_ action: DashboardAction) throws(WireError) -> String {
        performed.withLock { $0.append(action) }
        return "done \(action)"
    }

    static let hostile = "<script>alert(1)</script>"
    static let due = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z

    /// Two shards, shard 1 down; a reminder and a dead letter whose ids, recipient, title and
    /// body are HTML.
    static func make() throws -> FixedSource {
        let reminderJSON = """
            {"id":"\(hostile)","recipient":"<b>bob</b>","content":{"title":"\(hostile)","body":"<img src=x onerror=alert(2)>",
            "userInfo":{"k":"<b>bold</b>"}},"trigger":{"at":"2026-12-24T08:00:00Z"}}
            """
        let reminder = try WireCodec().decode(Reminder.self, from: Data(reminderJSON.utf8))
        let listing = ReminderListing(reminder: reminder, state: .pending, nextFireAt: due, deliveredCount: 0, lastFiredAt: nil)
        let firing = Firing(reminderId: reminder.id, recipient: reminder.recipient, dueAt: due, content: reminder.content, attempt: 5)
        let overview = OverviewView(
            shards: [
                ShardOverview(
                    shard: 0, phase: "active", epoch: 3, reminders: ["pending": 7], inFlight: 1, dueBacklog: 2,
                    oldestUndeliveredAgeSeconds: 1.5, firingsPerSecond: 4.25, fireLateness: LatenessSummary(count: 10, p50: 1.5, p99: 9.25, max: 12),
                    storeBytes: 4096, storeFull: false, workersAlive: 2, deadLettered: 1),
                .down(1, error: "shard 1 did not answer within 1000 ms"),
            ], takenAt: due)
        let workers = WorkersView(
            workers: [WorkerRow(shard: 0, worker: WorkerReport(
                id: WorkerID(hostile), host: "h<1>", pid: 42, alive: true, lastSeenAt: due, acknowledged: 3, delivered: 4))],
            missing: [MissingShard(shard: 1, error: "no answer")])
        return FixedSource(
            overview: overview, workers: workers, reminders: PageView(items: [listing], nextCursor: "c<1>", partial: nil),
            deadLetters: PageView(
                items: [firing], nextCursor: nil, partial: "1 of 2 shard(s) did not answer: shard 1",
                notes: [firing.firingId.description: "webhook:https://x/ refused: HTTP 400: <img src=x onerror=alert(3)>"]))
    }
}
