import ChimeCore
import ChimeDelivery
import ChimeTestSupport
import ChimeWire
import Foundation
import Synchronization
import Testing

/// A channel answering from a script per destination key, recording the attempts.
final class ScriptedChannel: DeliveryChannel {
    let script: Mutex<[String: [DeliveryResult]]>
    let calls = Mutex<[(key: String, number: Int, at: ContinuousClock.Instant)]>([])
    let blockKey: String?
    let release = DispatchSemaphore(value: 0)

    init(_ script: [String: [DeliveryResult]], blocking blockKey: String? = nil) {
        self.script = Mutex(script)
        self.blockKey = blockKey
    }

    func deliver(_ attempt: DeliveryAttempt) -> DeliveryResult {
        let key = attempt.destination.key
        calls.withLock { $0.append((key, attempt.number, .now)) }
        if key == blockKey { release.wait() }
        return script.withLock { script in
            guard var answers = script[key], !answers.isEmpty else { return .delivered(status: 200) }
            let answer = answers.removeFirst()
            script[key] = answers
            return answer
        }
    }
}

/// The engine with scripted channels, in process: real threads and timers, waits with deadlines.
@Suite struct DeliveryEngineTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_113_600)
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    static func hook(_ host: String) -> Destination {
        .webhook(WebhookDestination(url: "https://\(host)/hook", secrets: [secret]))
    }

    static func job(_ id: ReminderID, _ destinations: [Destination], budget: Double = 10) -> DeliveryJob {
        DeliveryJob(
            firing: Firing(reminderId: id, recipient: "alice", dueAt: t0, content: Content(body: "b")), eventJSON: Data("{}".utf8),
            destinations: destinations, budget: budget)
    }

    static func limits(attempts: Int = 4) -> DeliveryLimits {
        DeliveryLimits(schedule: RetrySchedule(base: 0.02, cap: 0.05, maximumAttempts: attempts), maximumPerHost: 1, maximumInFlight: 8)
    }

    func reports(of engine: DeliveryEngine, count: Int) throws -> [DeliveryReport] {
        var reports: [DeliveryReport] = []
        try expectEventually(timeout: 10, "\(count) reports") {
            reports += engine.takeFinished()
            return reports.count >= count
        }
        return reports
    }

    @Test func aFiringIsReportedOnceEveryDestinationHasAnOutcome() throws {
        let channel = ScriptedChannel([
            Self.hook("a.example").key: [.retry(status: 503, reason: "HTTP 503", retryAfter: nil), .delivered(status: 200)],
            Self.hook("b.example").key: [.refused(status: 410, reason: "HTTP 410", removesDestination: true)],
        ])
        let engine = DeliveryEngine(channels: ["webhook": channel], limits: Self.limits(), worker: "w1", random: { 0.5 })
        engine.submit(Self.job("r1", [Self.hook("a.example"), Self.hook("b.example")]))
        let report = try #require(try reports(of: engine, count: 1).first)
        #expect(report.outcomes.map(\.outcome) == [.delivered, .removed])
        #expect(report.outcomes[0].attempts.map(\.status) == [503, 200])
        #expect(!report.hasFailure && engine.unfinishedCount == 0)
    }

    @Test func retriesOfOneDestinationHoldNeitherItsSiblingsNorOtherFirings() throws {
        let slow = Self.hook("slow.example")
        let channel = ScriptedChannel([slow.key: Array(repeating: .retry(status: 503, reason: "busy", retryAfter: 0.3), count: 3)])
        let engine = DeliveryEngine(channels: ["webhook": channel], limits: Self.limits(attempts: 4), worker: "w1")
        engine.submit(Self.job("r1", [slow, Self.hook("fast.example")]))
        engine.submit(Self.job("r2", [Self.hook("fast.example")]))
        let first = try #require(try reports(of: engine, count: 1).first)
        #expect(first.firingId.key.id == "r2", "the other firing finished while r1's slow destination waited for its retries")
        let second = try #require(try reports(of: engine, count: 1).first)
        #expect(second.outcomes.map(\.outcome) == [.delivered, .delivered])
        #expect(second.outcomes[0].attempts.count == 4)
    }

    /// One engine shared by two shards' services (issue 39: the per-host bound held per
    /// shard): the host's bound of 1 holds across owners, and each owner takes only its reports.
    @Test func ownersShareTheHostBoundAndTakeOnlyTheirReports() throws {
        let stuck = Self.hook("stuck.example")
        let channel = ScriptedChannel([:], blocking: stuck.key)
        let engine = DeliveryEngine(channels: ["webhook": channel], limits: Self.limits(), worker: "w1")
        engine.submit(Self.job("r1", [stuck]), owner: 0)
        engine.submit(Self.job("r2", [.webhook(WebhookDestination(url: "https://stuck.example/other", secrets: [Self.secret]))]), owner: 1)
        engine.submit(Self.job("r3", [Self.hook("free.example")]), owner: 1)
        var ownerOne: [DeliveryReport] = []
        try expectEventually(timeout: 10, "owner 1's free report") {
            ownerOne += engine.takeFinished(owner: 1)
            return !ownerOne.isEmpty
        }
        #expect(ownerOne.map(\.firingId.key.id) == ["r3"])
        #expect(channel.calls.withLock { $0.map(\.key) }.filter { $0.contains("stuck") }.count == 1, "owner 1's stuck.example request waits for owner 0's")
        #expect(engine.takeFinished(owner: 0).isEmpty)
        channel.release.signal()
        var ownerZero: [DeliveryReport] = []
        try expectEventually(timeout: 10, "both stuck.example reports") {
            ownerZero += engine.takeFinished(owner: 0)
            ownerOne += engine.takeFinished(owner: 1)
            return ownerZero.count == 1 && ownerOne.count == 2
        }
        #expect(ownerZero.map(\.firingId.key.id) == ["r1"])
        #expect(ownerOne.map(\.firingId.key.id) == ["r3", "r2"])
        #expect(engine.takeFinished().isEmpty, "owner 0 is the default owner and has nothing left")
    }

    @Test func oneHostGetsAtMostItsBoundWhileOthersGoOn() throws {
        let stuck = Self.hook("stuck.example")
        let channel = ScriptedChannel([:], blocking: stuck.key)
        let engine = DeliveryEngine(channels: ["webhook": channel], limits: Self.limits(), worker: "w1")
        engine.submit(Self.job("r1", [stuck]))
        engine.submit(Self.job("r2", [.webhook(WebhookDestination(url: "https://stuck.example/other", secrets: [Self.secret]))]))
        engine.submit(Self.job("r3", [Self.hook("free.example")]))
        let free = try #require(try reports(of: engine, count: 1).first)
        #expect(free.firingId.key.id == "r3")
        #expect(channel.calls.withLock { $0.map(\.key) }.filter { $0.contains("stuck") }.count == 1, "the second stuck request waits its turn")
        channel.release.signal()
        let rest = try reports(of: engine, count: 2)
        #expect(Set(rest.map(\.firingId.key.id)) == ["r1", "r2"])
    }

    @Test func aDestinationWithoutAChannelIsRefusedSayingSo() throws {
        let engine = DeliveryEngine(channels: [:], limits: Self.limits(), worker: "w1")
        engine.submit(Self.job("r1", [.fcm(FCMDestination(token: "t"))]))
        let report = try #require(try reports(of: engine, count: 1).first)
        #expect(report.outcomes.first?.reason == "no fcm channel is configured on this worker")
        #expect(report.hasFailure)
    }

    @Test func nothingIsSentPastTheBudget() throws {
        let channel = ScriptedChannel([:])
        let engine = DeliveryEngine(channels: ["webhook": channel], limits: Self.limits(), worker: "w1")
        engine.submit(Self.job("r1", [Self.hook("a.example")], budget: 0))
        let report = try #require(try reports(of: engine, count: 1).first)
        #expect(report.outcomes.first?.outcome == .gaveUp)
        #expect(report.outcomes.first?.reason == "not sent: the firing is past its delivery deadline")
        #expect(channel.calls.withLock { $0.isEmpty })
    }
}
