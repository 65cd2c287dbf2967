import Foundation
import HelperThreads
import ZeroMQ

/// A thread that works through submitted inputs in order, keeps each output under its
/// submission number, and wakes the loop after each (`HelperThread.startSignaling`): the reply encoder's
/// pages and the snapshot writer's snapshots.
///
/// Thread safety: the queue and the outputs are guarded by one condition lock; the signal
/// socket is used by the worker thread only.
final class BackgroundQueue<Input: Sendable, Output: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [(number: UInt64, input: Input)] = []
    private var outputs: [UInt64: Output] = [:]
    private var submitted: UInt64 = 0
    /// How many inputs were worked through (outputs taken back or not).
    private var done: UInt64 = 0
    private var isStopping = false
    private let thread: HelperThread
    private let work: @Sendable (Input) -> Output

    /// Starts the thread (see `HelperThread.startSignaling` for the parameters); `work`
    /// turns each input into its output on that thread.
    /// - Throws: `ZeroMQError` when the signal socket cannot be made or connected.
    init(
        name: String, context: Context, signalEndpoint: String, priority: HelperThread.Priority,
        work: @escaping @Sendable (Input) -> Output
    ) throws {
        self.work = work
        thread = HelperThread(name: name, priority: priority)
        try thread.startSignaling(context: context, signalEndpoint: signalEndpoint) { [self] signal in run(signal: signal) }
    }

    /// Queues `input`; returns the number `take` and `wait` hand its output back by.
    func submit(_ input: Input) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        submitted += 1
        queue.append((submitted, input))
        condition.signal()
        return submitted
    }

    /// Inputs submitted whose outputs were not taken back yet (queued, being worked on, or done).
    var backlog: Int {
        condition.lock()
        defer { condition.unlock() }
        return Int(submitted - done) + outputs.count
    }

    /// The output of `number` once done (removed from the queue), else `nil`.
    func take(_ number: UInt64) -> Output? {
        condition.lock()
        defer { condition.unlock() }
        return outputs.removeValue(forKey: number)
    }

    /// Waits until `number` is done, then takes its output (`nil` when it was taken already).
    func wait(for number: UInt64) -> Output? {
        condition.lock()
        defer { condition.unlock() }
        while done < number { condition.wait() }
        return outputs.removeValue(forKey: number)
    }

    /// Waits until every submitted input is done.
    func drain() {
        condition.lock()
        defer { condition.unlock() }
        while done < submitted { condition.wait() }
    }

    /// Works through what is queued, then stops the thread and waits for it.
    func stop() {
        condition.lock()
        isStopping = true
        condition.broadcast()
        condition.unlock()
        thread.join()
    }

    private func run(signal: Socket) {
        while true {
            condition.lock()
            while queue.isEmpty && !isStopping { condition.wait() }
            if queue.isEmpty {
                condition.unlock()
                return
            }
            let number = queue[0].number
            // Taken out of the queue and released before the loop is signalled: a snapshot's
            // state copy is freed by the time the loop trims the heap after it.
            var input = Optional(queue.removeFirst().input)
            condition.unlock()
            // Never nil here; `take` leaves nothing of the input in this frame during `work`.
            let output = input.take().map(work)
            condition.lock()
            outputs[number] = output
            done += 1
            condition.broadcast()
            condition.unlock()
            // A full signal queue already holds a wake-up for the loop.
            _ = try? signal.send(Data(), dontWait: true)
        }
    }
}
