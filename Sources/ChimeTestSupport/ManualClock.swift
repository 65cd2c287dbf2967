import ChimeRuntime
import Foundation
import Synchronization

/// A clock that moves only when told, for tests of time-driven state (NIO's
/// `EmbeddedEventLoop.advanceTime` is the model).
public final class ManualClock: ServiceClock {
    private let current: Mutex<Date>

    /// Starts at `start` (UTC).
    public init(_ start: Date) { current = Mutex(start) }

    /// Starts at an RFC 3339 instant such as `2026-12-24T08:00:00Z`.
    public convenience init(_ rfc3339: String) {
        self.init(ISO8601DateFormatter().date(from: rfc3339) ?? { preconditionFailure("bad instant \(rfc3339)") }())
    }

    /// The current instant.
    public var now: Date { current.withLock { $0 } }

    /// Moves forward by `seconds` and returns the new instant.
    @discardableResult
    public func advance(by seconds: Double) -> Date {
        current.withLock { value in
            value = value.addingTimeInterval(seconds)
            return value
        }
    }

    /// Jumps to `instant`.
    public func set(_ instant: Date) { current.withLock { $0 = instant } }
}
