import ChimeCore
import Foundation

/// A workload of `../shared/WORKLOADS.md`: what is scheduled, when it is due, and what
/// happens to the cluster meanwhile.
public enum Workload: String, CaseIterable, Sendable, Codable {
    /// Burst: every reminder due at the same instant T.
    case w1 = "W1"
    /// Spread: `due_i = T + i × 30 s / N`, a steady rate over 30 s.
    case w2 = "W2"
    /// Crash and restart: all due at T = T_plan + 20 s; every process SIGKILLed at T − 5 s
    /// and restarted at T + 5 s.
    case w3 = "W3"
    /// Ingest at scale: reminders due a day ahead with a 100-byte body; nothing fires.
    case w4 = "W4"

    /// The default N (the smallest standard size of WORKLOADS.md).
    public var standardCount: Int {
        switch self {
        case .w1: 10_000
        case .w2: 30_000
        case .w3: 2_000
        case .w4: 10_000
        }
    }

    /// Whether reminders fire during the run (W4 only ingests).
    public var fires: Bool { self != .w4 }

    /// How long before T ingestion must have finished for the run to be valid, in seconds:
    /// 1 s for W1 and W2, 7 s for W3 (2 s before the kill).
    public var requiredIngestMargin: Double {
        switch self {
        case .w1, .w2: 1
        case .w3: 7
        case .w4: 0
        }
    }

    /// The lead `T − T_plan` in seconds: fixed 20 s for W3; for W1 and W2 the reference
    /// driver's `max(4 s, 1.3 × N / expectedIngestRate + 3 s)`; 0 for W4 (dues a day ahead).
    /// - Parameter expectedIngestRate: reminders per second the ingestion is expected to reach.
    public func lead(count: Int, expectedIngestRate: Double) -> Double {
        switch self {
        case .w1, .w2: max(4, 1.3 * Double(count) / expectedIngestRate + 3)
        case .w3: 20
        case .w4: 0
        }
    }
}

/// The plan of one run: N reminders `(id, due)` with ids `0..<N` in ingestion order, and
/// the instants the metrics refer to. All instants are Unix epoch seconds.
public struct WorkloadPlan: Sendable {
    /// The workload the plan belongs to.
    public let workload: Workload
    /// When the plan was generated (T_plan), epoch seconds.
    public let plannedAt: Double
    /// T, epoch seconds: the burst instant (W1, W3) or the start of the window (W2).
    public let fireAt: Double
    /// `dues[id]`: the due instant of reminder `id`, epoch seconds (microsecond precision).
    public let dues: [Double]

    /// The number of reminders.
    public var count: Int { dues.count }
    /// The lead `T − T_plan`, in seconds.
    public var lead: Double { fireAt - plannedAt }
    /// The latest due instant, epoch seconds.
    public var lastDue: Double { dues.max() ?? fireAt }

    /// The length of W2's window, in seconds.
    public static let spreadWindow: Double = 30
    /// How far ahead W4's reminders are due, in seconds (a day).
    public static let ingestHorizon: Double = 86_400
    /// W4 spreads its dues over this window after the horizon, in seconds, so the timer
    /// queue holds N distinct instants.
    public static let ingestWindow: Double = 3_600

    /// Makes the plan of `workload` for `count` reminders.
    ///
    /// T is `plannedAt + lead` rounded up to a whole millisecond, because the wire carries
    /// instants in milliseconds: a burst's due is then exact on the wire.
    /// - Parameters:
    ///   - plannedAt: T_plan, epoch seconds.
    ///   - lead: `T − T_plan` in seconds (see ``Workload/lead(count:expectedIngestRate:)``).
    public init(workload: Workload, count: Int, plannedAt: Double, lead: Double) {
        precondition(count > 0, "a plan needs at least one reminder")
        self.workload = workload
        self.plannedAt = plannedAt
        let horizon = workload == .w4 ? Self.ingestHorizon : lead
        let fireAt = ((plannedAt + horizon) * 1000).rounded(.up) / 1000
        self.fireAt = fireAt
        switch workload {
        case .w1, .w3:
            dues = Array(repeating: fireAt, count: count)
        case .w2:
            let spacing = Self.spreadWindow / Double(count)
            dues = (0..<count).map { fireAt + Double($0) * spacing }
        case .w4:
            let spacing = Self.ingestWindow / Double(count)
            dues = (0..<count).map { fireAt + Double($0) * spacing }
        }
    }

    /// The due instants with each reminder's spread delay added (`spread` seconds; reminder
    /// `id` is `recipients[id % count]`'s): what the coordinator makes them due at, computed
    /// as it does (`Trigger.spreadDelay`) from the millisecond the wire carries.
    public func spreadDues(_ spread: Double?, recipients: [String]) -> [Double] {
        guard let spread, !recipients.isEmpty else { return dues }
        return dues.enumerated().map { id, due in
            let milliseconds = Int64((due * 1000 - 0.001).rounded(.up))
            let key = ReminderKey(ReminderID(String(id)), of: RecipientID(recipients[id % recipients.count]))
            let delay = Trigger.spreadDelay(of: FiringID(key, dueAtMilliseconds: milliseconds), spread: spread)
            return Double(milliseconds) / 1000 + delay
        }
    }

    /// The plan file of WORKLOADS.md: N lines `"<id> <due>"`, due with 6 decimals.
    public func planFileContents() -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * 20)
        for (id, due) in dues.enumerated() {
            RecordLine.appendDecimal(id, to: &bytes)
            bytes.append(UInt8(ascii: " "))
            RecordLine.appendSeconds(due, to: &bytes)
            bytes.append(UInt8(ascii: "\n"))
        }
        return Data(bytes)
    }
}
