import ChimeClient
import ChimeCore
import ChimeWire
import Foundation
import Synchronization

/// Chunks in flight: up to ``BulkScheduler/chunksInFlight`` sent before a reply is awaited,
/// over a ``PipelinedClient`` per shard; replies handled on the caller's thread.
extension BulkScheduler {
    /// Replies handed from the pipelined clients' threads to the caller's, with a semaphore
    /// signalled once per reply.
    final class Arrivals: Sendable {
        let replies = Mutex<[(String, Result<Data, WireError>)]>([])
        let arrived = DispatchSemaphore(value: 0)
    }

    /// Sends one shard's chunk without waiting for its reply; first handles one reply when
    /// ``chunksInFlight`` chunks are already in flight.
    /// - Throws: `WireError(.unavailable)`.
    func send(_ chunk: Chunk, toShard shard: Int) throws(WireError) {
        while inFlight.count >= chunksInFlight { try settleOne() }
        let pipeline: PipelinedClient
        if let made = pipelines[shard] {
            pipeline = made
        } else {
            // Each chunk may wait for the ones sent before it, and shards share the cores:
            // a chunk gets the request timeout once per chunk that can be in flight.
            pipeline = try client.pipelinedClient(forShard: shard, window: chunksInFlight, timeoutFactor: chunksInFlight)
            pipelines[shard] = pipeline
        }
        let (requestId, body) = request(for: chunk.items)
        inFlight[requestId] = (chunk.items, chunk.recipient)
        let arrivals = arrivals
        pipeline.submit(body, requestId: requestId) { result in
            arrivals.replies.withLock { $0.append((requestId, result)) }
            arrivals.arrived.signal()
        }
    }

    /// Waits for one chunk's reply and counts it; a reply that is not `ok` has the chunk sent
    /// again one request at a time (``deliver(_:routing:answered:)``).
    /// - Throws: `WireError(.unavailable)` and the other errors that stop the run.
    func settleOne() throws(WireError) {
        arrivals.arrived.wait()
        guard let (requestId, result) = arrivals.replies.withLock({ $0.isEmpty ? nil : $0.removeFirst() }),
            let chunk = inFlight.removeValue(forKey: requestId)
        else { return }
        let reply: ControlReply<ScheduleResult>?
        switch result {
        case .success(let bytes): reply = try codec.decode(ControlReply<ScheduleResult>.self, from: bytes)
        case .failure(let error) where Self.stopsTheRun.contains(error.code): throw error
        case .failure: reply = nil
        }
        // `wrong_shard`: the map changed; the one-at-a-time path refreshes it and reroutes.
        let answered = reply?.error?.code == .wrongShard ? nil : reply
        try deliver(chunk.items, routing: chunk.recipient, answered: answered)
        progress.update(done: scheduled, failed: failed, fraction: settledShare)
    }
}
