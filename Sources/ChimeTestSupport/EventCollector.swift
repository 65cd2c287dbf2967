import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import Synchronization
import ChimeClient

/// Subscribes to fire events on a thread of its own and collects them for assertions.
public final class EventCollector: Sendable {
    private let storage = EventStorage()
    private let stop = StopSignal()
    private let finished = DispatchSemaphore(value: 0)

    /// Connects to `endpoint` and starts collecting (`recipient`'s events, or all).
    public init(endpoint: String, recipient: RecipientID? = nil) {
        let stop = stop
        let finished = finished
        let storage = storage
        let thread = Thread {
            let client = SubscriberClient(endpoint: endpoint, recipient: recipient, stop: stop)
            do {
                try client.run { event, _ in storage.append(event) }
            } catch {
                print("EventCollector: \(error)")
            }
            finished.signal()
        }
        thread.name = "event-collector"
        thread.start()
    }

    /// Every event received so far, in arrival order.
    public var received: [FireEvent] { storage.all }

    /// Events of one reminder.
    public func events(of reminder: ReminderID) -> [FireEvent] { received.filter { $0.firing.reminderId == reminder } }

    /// Stops the thread and waits (at most 2 s) for it to close its socket.
    public func close() {
        stop.requestStop()
        _ = finished.wait(timeout: .now() + 2)
    }

    deinit { close() }
}

final class EventStorage: Sendable {
    private let events = Mutex<[FireEvent]>([])
    func append(_ event: FireEvent) { events.withLock { $0.append(event) } }
    var all: [FireEvent] { events.withLock { $0 } }
}
