import Foundation
import Synchronization

/// A one-slot hand-off between threads with a bounded wait.
final class Mailbox<Value: Sendable>: Sendable {
    private let delivered = DispatchSemaphore(value: 0)
    private let slot = Mutex<Value?>(nil)

    func put(_ value: Value) {
        slot.withLock { $0 = value }
        delivered.signal()
    }

    /// The value put, or `nil` when none arrives within `timeout`.
    func take(timeout: Duration) -> Value? {
        guard delivered.wait(timeout: .now() + .nanoseconds(timeout.wholeNanoseconds)) == .success else {
            return nil
        }
        return slot.withLock { $0.take() }
    }
}

extension Duration {
    var wholeNanoseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    }
}

/// Frames from strings, to keep expectations short.
func frames(_ strings: String...) -> [Data] {
    strings.map { Data($0.utf8) }
}
