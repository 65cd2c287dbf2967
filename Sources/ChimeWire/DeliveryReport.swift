import ChimeCore
import Foundation

/// One attempt at one destination, as a dead letter shows it.
///
/// JSON shape: `{"at": "…Z", "worker": "host-12", "number": 2, "status": 503, "error":
/// "HTTP 503: busy"}` (`status` absent when no response came; `error` absent on success).
public struct DeliveryAttemptRecord: Codable, Hashable, Sendable {
    /// When the attempt ended (UTC, the worker's clock).
    public var at: Date
    /// The worker that made it.
    public var worker: WorkerID
    /// 1 for the first attempt at this destination, then 2, 3, …
    public var number: Int
    /// The HTTP status, when a response came.
    public var status: Int?
    /// What went wrong (status and a bounded excerpt of the response, or the transport
    /// error), at most ``DeliveryReport/maximumExcerptBytes`` bytes; `nil` on success.
    public var error: String?

    /// Creates the value from its fields (see each property for meaning and units); `error`
    /// is cut to ``DeliveryReport/maximumExcerptBytes`` bytes.
    public init(at: Date, worker: WorkerID, number: Int, status: Int?, error: String?) {
        self.at = at
        self.worker = worker
        self.number = number
        self.status = status
        self.error = error.map { DeliveryReport.excerpt($0) }
    }
}

/// What became of one destination of a firing.
///
/// JSON shape: `{"destination": "webhook:https://…", "channel": "webhook", "outcome":
/// "delivered" | "refused" | "removed" | "gaveUp", "reason": "…", "attempts": [attempt, …]}`.
/// `destination` is the key with its token masked (``Destination/redactedKey``); `attempts`
/// keeps the last ``DeliveryReport/maximumAttempts``.
public struct DestinationOutcome: Codable, Hashable, Sendable {
    /// The outcomes a destination ends with.
    public enum Kind: String, Codable, Hashable, Sendable {
        /// Accepted (a 2xx).
        case delivered
        /// Refused for good (a 4xx other than 408 and 429, a provider's permanent error).
        case refused
        /// The provider said the destination no longer exists: the coordinator removes it.
        case removed
        /// Retryable failures until the attempts or the lease budget ran out.
        case gaveUp
    }

    /// The destination's key, token masked.
    public var destination: String
    /// `webhook`, `apns` or `fcm`.
    public var channel: String
    /// How it ended.
    public var outcome: Kind
    /// Why, for every outcome but `delivered` (bounded as an attempt's `error`).
    public var reason: String?
    /// The attempts, oldest first (the last ``DeliveryReport/maximumAttempts``).
    public var attempts: [DeliveryAttemptRecord]

    /// Creates the value from its fields; keeps the last ``DeliveryReport/maximumAttempts``
    /// attempts and cuts `reason` to ``DeliveryReport/maximumExcerptBytes`` bytes.
    public init(destination: String, channel: String, outcome: Kind, reason: String?, attempts: [DeliveryAttemptRecord]) {
        self.destination = destination
        self.channel = channel
        self.outcome = outcome
        self.reason = reason.map { DeliveryReport.excerpt($0) }
        self.attempts = Array(attempts.suffix(DeliveryReport.maximumAttempts))
    }

    /// Whether the firing failed at this destination (refused or given up): it is then
    /// dead-lettered. A removed destination is not a failure of the firing.
    public var isFailure: Bool { outcome == .refused || outcome == .gaveUp }
}

/// A worker's account of one firing's destinations, sent with the firing's acknowledgement
/// once every destination has an outcome (`WorkerMessage.deliveries`).
///
/// JSON shape: `{"firingId": "…", "outcomes": [outcome, …]}`.
public struct DeliveryReport: Codable, Hashable, Sendable {
    /// The most attempts an outcome keeps (the last ones).
    public static let maximumAttempts = 8
    /// The longest error, reason or response excerpt kept, in UTF-8 bytes.
    public static let maximumExcerptBytes = 256
    /// The most destinations a report holds.
    public static let maximumOutcomes = Destination.maximumPerRecipient

    /// The firing.
    public var firingId: FiringID
    /// One outcome per destination of the firing's recipient.
    public var outcomes: [DestinationOutcome]

    /// Creates the value from its fields.
    public init(firingId: FiringID, outcomes: [DestinationOutcome]) {
        self.firingId = firingId
        self.outcomes = outcomes
    }

    /// Whether any destination failed (refused or given up): the firing is dead-lettered.
    public var hasFailure: Bool { outcomes.contains(where: \.isFailure) }

    /// A one-line cause for a dead letter: the first failed destination and its reason
    /// (`webhook:https://… refused: HTTP 400: bad payload`), plus how many others failed.
    public var cause: String {
        let failed = outcomes.filter(\.isFailure)
        guard let first = failed.first else { return "delivered" }
        let others = failed.count > 1 ? " (and \(failed.count - 1) more destinations)" : ""
        return "\(first.destination) \(first.outcome.rawValue): \(first.reason ?? "no reason given")\(others)"
    }

    /// `text` cut to at most ``maximumExcerptBytes`` UTF-8 bytes on a character boundary,
    /// with `…` when cut; control characters become spaces.
    public static func excerpt(_ text: String) -> String {
        let cleaned = String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
        guard cleaned.utf8.count > maximumExcerptBytes else { return cleaned }
        var cut = ""
        for character in cleaned {
            if cut.utf8.count + character.utf8.count > maximumExcerptBytes - 3 { break }
            cut.append(character)
        }
        return cut + "…"
    }

    /// The report when its fields are in range: at most ``maximumOutcomes`` outcomes, each
    /// with at most ``maximumAttempts`` attempts, texts at most ``maximumExcerptBytes`` (+ the
    /// destination key's bound).
    /// - Throws: `WireError` `.invalidArgument` naming the first field out of range.
    public func validated(field: String) throws(WireError) -> DeliveryReport {
        guard outcomes.count <= Self.maximumOutcomes else {
            throw WireError(.invalidArgument, "at most \(Self.maximumOutcomes) outcomes", field: "\(field).outcomes")
        }
        for (index, outcome) in outcomes.enumerated() {
            let bounded =
                outcome.attempts.count <= Self.maximumAttempts
                && (outcome.reason?.utf8.count ?? 0) <= Self.maximumExcerptBytes
                && outcome.destination.utf8.count <= Destination.maximumURLBytes + 16
                && outcome.attempts.allSatisfy { ($0.error?.utf8.count ?? 0) <= Self.maximumExcerptBytes }
            guard bounded else {
                throw WireError(.invalidArgument, "an outcome over its bounds", field: "\(field).outcomes[\(index)]")
            }
        }
        return self
    }
}

/// Why a firing was dead-lettered after its destinations failed: the report's cause and its
/// outcomes, kept with the dead letter (durable, bounded as ``DeliveryReport``).
///
/// JSON shape: `{"cause": "…", "worker": "host-12", "outcomes": [outcome, …]}`.
public struct DeliveryFailure: Codable, Hashable, Sendable {
    /// One line: the first failed destination and its reason.
    public var cause: String
    /// The worker that reported it.
    public var worker: WorkerID
    /// Every destination's outcome and attempts.
    public var outcomes: [DestinationOutcome]

    /// Creates the value from its fields.
    public init(cause: String, worker: WorkerID, outcomes: [DestinationOutcome]) {
        self.cause = cause
        self.worker = worker
        self.outcomes = outcomes
    }
}
