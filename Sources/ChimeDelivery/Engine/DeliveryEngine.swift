import ChimeCore
import ChimeWire
import Dispatch
import Foundation
import Synchronization

/// One firing to deliver to its recipient's destinations, as a worker hands it over after
/// publishing its fire event.
public struct DeliveryJob: Sendable {
    /// The firing (its id is the idempotency key every destination sees).
    public var firing: Firing
    /// The fire event's JSON, as published.
    public var eventJSON: Data
    /// Where to deliver it: the recipient's destinations, in order.
    public var destinations: [Destination]
    /// How long the job may take, in seconds from its submission: nothing is sent after (the
    /// worker passes part of the coordinator's lease, after which another worker gets it).
    public var budget: Double

    /// A job from its parts.
    public init(firing: Firing, eventJSON: Data, destinations: [Destination], budget: Double) {
        self.firing = firing
        self.eventJSON = eventJSON
        self.destinations = destinations
        self.budget = budget
    }
}

/// The limits a ``DeliveryEngine`` keeps.
public struct DeliveryLimits: Hashable, Sendable {
    /// Retries, back-off and attempts per destination.
    public var schedule: RetrySchedule
    /// Requests in flight to one host at most (a host's slow answers hold only its own).
    public var maximumPerHost: Int
    /// Requests in flight at most (each holds a delivery thread while it waits).
    public var maximumInFlight: Int
    /// Consecutive failures that open an endpoint's circuit.
    public var circuitThreshold: Int
    /// How long an open circuit stays open, in seconds.
    public var circuitOpenSeconds: Double

    /// Limits from their parts (counts at least 1).
    public init(
        schedule: RetrySchedule = RetrySchedule(), maximumPerHost: Int = 4, maximumInFlight: Int = 32, circuitThreshold: Int = 5,
        circuitOpenSeconds: Double = 30
    ) {
        self.schedule = schedule
        self.maximumPerHost = max(1, maximumPerHost)
        self.maximumInFlight = max(1, maximumInFlight)
        self.circuitThreshold = max(1, circuitThreshold)
        self.circuitOpenSeconds = circuitOpenSeconds
    }
}

/// Delivers firings to their destinations off the worker's socket thread: each attempt runs on
/// a Dispatch queue (a channel blocks up to its own timeout), retries wait on Dispatch timers,
/// so a destination's retries never hold its firing's other destinations or other firings.
/// At most `maximumPerHost` requests go to one host and `maximumInFlight` in all; the rest
/// wait their turn in submission order. An endpoint failing `circuitThreshold` times in a row
/// opens its circuit (``EndpointCircuit``): attempts are not sent until it half-opens.
///
/// When every destination of a job has an outcome, its ``DeliveryReport`` is ready for
/// ``takeFinished(owner:)`` (the worker's loop then acknowledges the firing with it).
public final class DeliveryEngine: Sendable {
    /// What `onAttempt` hears after each attempt: the channel, the result's label
    /// (`delivered`, `refused`, `removed`, `retry`) and its duration in seconds; and once per
    /// destination that ends without success by running out (`gave_up`, `expired`), with no
    /// duration.
    /// Every outcome label `onAttempt` can hear, attempts' first.
    public static let outcomeLabels = ["delivered", "refused", "removed", "retry", "gave_up", "expired"]

    public typealias AttemptObserver = @Sendable (_ channel: String, _ outcome: String, _ seconds: Double?) -> Void

    private struct Pending: Sendable {
        let firingId: FiringID
        let index: Int
        let host: String
    }

    private struct Job: Sendable {
        var job: DeliveryJob
        /// Whose ``takeFinished(owner:)`` gets its report.
        var owner: Int
        var runs: [DestinationRun]
        var outcomes: [DestinationOutcome?]
    }

    private struct State: Sendable {
        var jobs: [FiringID: Job] = [:]
        var perHost: [String: Int] = [:]
        var inFlight = 0
        var waiting: [Pending] = []
        var circuits: [String: EndpointCircuit] = [:]
        var finished: [Int: [DeliveryReport]] = [:]
    }

    private let channels: [String: any DeliveryChannel]
    private let limits: DeliveryLimits
    private let worker: WorkerID
    private let onAttempt: AttemptObserver
    private let random: @Sendable () -> Double
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "chime.delivery", attributes: .concurrent)
    private let origin = ContinuousClock.now

    /// An engine with a channel per destination kind.
    /// - Parameters:
    ///   - channels: by ``Destination/channel`` (`webhook`, `apns`, `fcm`); a destination whose
    ///     channel is missing ends `refused` ("no channel configured").
    ///   - random: the jitter's draws in 0..<1.
    public init(
        channels: [String: any DeliveryChannel], limits: DeliveryLimits = DeliveryLimits(), worker: WorkerID,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }, onAttempt: @escaping AttemptObserver = { _, _, _ in }
    ) {
        self.channels = channels
        self.limits = limits
        self.worker = worker
        self.random = random
        self.onAttempt = onAttempt
    }

    /// Seconds on the monotonic clock since the engine was made.
    private var monotonic: Double {
        let (seconds, attoseconds) = (ContinuousClock.now - origin).components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Starts delivering `job` to each of its destinations. A job for a firing already in
    /// progress is ignored (a redelivery of the same firing to this worker).
    /// - Parameter owner: who takes its report (``takeFinished(owner:)``): a worker serving
    ///   several shards shares one engine among its shards' services, so the per-host and
    ///   in-flight bounds hold for the process; each service takes its own reports.
    public func submit(_ job: DeliveryJob, owner: Int = 0) {
        let deadline = monotonic + job.budget
        let runs = job.destinations.map {
            DestinationRun(destination: $0, schedule: limits.schedule, deadline: deadline, worker: worker)
        }
        let ready: [Pending] = state.withLock { state in
            guard state.jobs[job.firing.firingId] == nil else { return [] }
            if job.destinations.isEmpty {
                state.finished[owner, default: []].append(DeliveryReport(firingId: job.firing.firingId, outcomes: []))
                return []
            }
            state.jobs[job.firing.firingId] = Job(job: job, owner: owner, runs: runs, outcomes: Array(repeating: nil, count: runs.count))
            for (index, destination) in job.destinations.enumerated() {
                state.waiting.append(Pending(firingId: job.firing.firingId, index: index, host: Self.host(of: destination)))
            }
            return Self.startable(&state, limits: limits)
        }
        for pending in ready { start(pending) }
    }

    /// The reports of `owner`'s jobs whose destinations all have an outcome since its last call.
    public func takeFinished(owner: Int = 0) -> [DeliveryReport] {
        state.withLock { state in state.finished.removeValue(forKey: owner) ?? [] }
    }

    /// Jobs not finished yet.
    public var unfinishedCount: Int { state.withLock { $0.jobs.count } }

    /// Takes waiting attempts whose host has room, while the engine has room, in order.
    private static func startable(_ state: inout State, limits: DeliveryLimits) -> [Pending] {
        var started: [Pending] = []
        var index = 0
        while index < state.waiting.count, state.inFlight < limits.maximumInFlight {
            let pending = state.waiting[index]
            if state.perHost[pending.host, default: 0] < limits.maximumPerHost {
                state.waiting.remove(at: index)
                state.perHost[pending.host, default: 0] += 1
                state.inFlight += 1
                started.append(pending)
            } else {
                index += 1
            }
        }
        return started
    }

    private func start(_ pending: Pending) {
        queue.async { [self] in attempt(pending) }
    }

    /// Makes one attempt (or decides not to send it), then records the result.
    private func attempt(_ pending: Pending) {
        let now = monotonic
        let prepared: (DeliveryAttempt, DestinationRun)? = state.withLock { state in
            guard let job = state.jobs[pending.firingId] else { return nil }
            let run = job.runs[pending.index]
            return (
                DeliveryAttempt(
                    firing: job.job.firing, eventJSON: job.job.eventJSON, content: job.job.firing.content,
                    destination: run.destination, number: run.nextNumber,
                    expiresAt: Date().addingTimeInterval(run.deadline - now)),
                run
            )
        }
        guard let (attempt, run) = prepared else {
            release(pending)
            return
        }
        let endpoint = Self.endpoint(of: attempt.destination)
        if let expired = run.expiry(at: now) {
            onAttempt(attempt.destination.channel, "expired", nil)
            finish(pending, with: expired)
            return
        }
        let isAllowed = state.withLock { state in
            var circuit = state.circuits[endpoint] ?? EndpointCircuit(threshold: limits.circuitThreshold, openSeconds: limits.circuitOpenSeconds)
            defer { state.circuits[endpoint] = circuit }
            return circuit.allows(at: now)
        }
        let result: DeliveryResult
        let started = monotonic
        if !isAllowed {
            result = .retry(status: nil, reason: "not sent: the circuit of \(endpoint) is open after repeated failures", retryAfter: nil)
        } else if let channel = channels[attempt.destination.channel] {
            result = channel.deliver(attempt)
        } else {
            result = .refused(status: nil, reason: "no \(attempt.destination.channel) channel is configured on this worker", removesDestination: false)
        }
        let ended = monotonic
        let label: String
        switch result {
        case .delivered: label = "delivered"
        case .refused(_, _, let removes): label = removes ? "removed" : "refused"
        case .retry: label = "retry"
        }
        if isAllowed {
            onAttempt(attempt.destination.channel, label, ended - started)
            let isFailure = if case .retry = result { true } else { false }
            state.withLock { state in state.circuits[endpoint]?.record(success: !isFailure, at: ended) }
        }
        let step: DestinationRun.Step? = state.withLock { state in
            state.jobs[pending.firingId]?.runs[pending.index].record(result, at: Date(), monotonic: ended, unit: random())
        }
        switch step {
        case .finished(let outcome)?:
            if outcome.outcome == .gaveUp { onAttempt(outcome.channel, "gave_up", nil) }
            finish(pending, with: outcome)
        case .retry(let delay)?:
            release(pending)
            queue.asyncAfter(deadline: .now() + delay) { [self] in
                let ready = state.withLock { state in
                    state.waiting.append(pending)
                    return Self.startable(&state, limits: limits)
                }
                for next in ready { start(next) }
            }
        case nil:
            release(pending)
        }
    }

    /// Frees `pending`'s slot and starts what now fits.
    private func release(_ pending: Pending) {
        let ready = state.withLock { state in
            state.perHost[pending.host, default: 1] -= 1
            if state.perHost[pending.host] == 0 { state.perHost[pending.host] = nil }
            state.inFlight -= 1
            return Self.startable(&state, limits: limits)
        }
        for next in ready { start(next) }
    }

    /// Records a destination's outcome; the job's report is ready when it was the last.
    private func finish(_ pending: Pending, with outcome: DestinationOutcome) {
        state.withLock { state in
            guard var job = state.jobs[pending.firingId] else { return }
            job.outcomes[pending.index] = outcome
            if job.outcomes.allSatisfy({ $0 != nil }) {
                state.jobs[pending.firingId] = nil
                state.finished[job.owner, default: []].append(
                    DeliveryReport(firingId: pending.firingId, outcomes: job.outcomes.compactMap { $0 }))
            } else {
                state.jobs[pending.firingId] = job
            }
        }
        release(pending)
    }

    /// The host a destination's requests go to: a webhook URL's host, Apple's or Google's.
    static func host(of destination: Destination) -> String {
        switch destination {
        case .webhook(let webhook): URLComponents(string: webhook.url)?.host?.lowercased() ?? webhook.url
        case .apns(let apns): "apns-\(apns.environment.rawValue)"
        case .fcm: "fcm"
        }
    }

    /// The endpoint a circuit guards: a webhook's URL without its query, or the provider's host.
    static func endpoint(of destination: Destination) -> String {
        switch destination {
        case .webhook(let webhook):
            var parts = URLComponents(string: webhook.url)
            parts?.query = nil
            return parts?.string ?? webhook.url
        case .apns, .fcm: return host(of: destination)
        }
    }
}
