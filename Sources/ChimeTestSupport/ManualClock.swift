import ChimeRuntime
import Foundation
import Synchronization

/// A clock that moves only when told, for tests of time-driven state (NIO's
/// `EmbeddedEventLoop.advanceTime` is the model).
public final class ManualClock: ServiceClock {
    /// The wall clock and the monotonic reading, which move together except on `stepWall`.
    private let current: Mutex<(wall: Date, monotonic: Double)>

    /// Starts at `start` (UTC), with the monotonic reading at 1,000 s.
    public init(_ start: Date) { current = Mutex((start, 1_000)) }

    /// Starts at an RFC 3339 instant such as `2026-12-24T08:00:00Z`.
    public convenience init(_ rfc3339: String) {
        self.init(ISO8601DateFormatter().date(from: rfc3339) ?? { preconditionFailure("bad instant \(rfc3339)") }())
    }

    /// The current instant.
    public var now: Date { current.withLock { $0.wall } }

    /// The monotonic reading, in seconds.
    public var monotonic: Double { current.withLock { $0.monotonic } }

    /// Lets `seconds` pass (both clocks move) and returns the new instant.
    @discardableResult
    public func advance(by seconds: Double) -> Date {
        current.withLock { value in
            value.wall = value.wall.addingTimeInterval(seconds)
            value.monotonic += seconds
            return value.wall
        }
    }

    /// Lets time pass until `instant` (both clocks move by the difference; backwards only
    /// if `instant` is earlier, which a real monotonic clock never does).
    public func set(_ instant: Date) {
        current.withLock { value in
            value.monotonic += instant.timeIntervalSince(value.wall)
            value.wall = instant
        }
    }

    /// Steps the wall clock by `seconds` (negative: back) while no time passes: what NTP or
    /// an operator does to a machine's clock.
    public func stepWall(by seconds: Double) {
        current.withLock { $0.wall = $0.wall.addingTimeInterval(seconds) }
    }
}
