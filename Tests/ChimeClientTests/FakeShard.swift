import ChimeClient
import ChimeCore
import ChimeWire
import Foundation
import Synchronization
import ZeroMQ

/// An in-process stand-in for one shard's control socket: a ROUTER bound on `inproc://` on
/// a thread of its own, answering each request with `answer(request)`; `nil` stays silent
/// (a stopped shard). Every request's bytes are kept for the test to check.
final class FakeShard: Sendable {
    let id: Int
    let endpoint: String
    private let received = Mutex<[Data]>([])
    private let isStopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Binds and starts answering. `answer` runs on the shard's thread.
    init(
        id: Int, context: Context, tag: String, endpoint: String? = nil,
        answer: @escaping @Sendable (FakeShard, ControlRequest) -> Data?
    ) throws {
        self.id = id
        self.endpoint = endpoint ?? "inproc://fake-shard-\(tag)-\(id)"
        let bound = DispatchSemaphore(value: 0)
        let failure = Mutex<(any Error)?>(nil)
        let endpoint = self.endpoint
        let thread = Thread { [self] in
            defer { finished.signal() }
            let socket: Socket
            do {
                socket = try Socket(.router, context: context)
                try socket.set(.linger(milliseconds: 0))
                try socket.bind(to: endpoint)
            } catch {
                failure.withLock { $0 = error }
                bound.signal()
                return
            }
            bound.signal()
            defer { socket.close() }
            let poller = Poller()
            poller.register(socket, for: .readable)
            while !isStopping.load(ordering: .acquiring) {
                guard (try? poller.poll(timeout: .milliseconds(20))) ?? 0 > 0,
                    let frames = try? socket.receiveMessage(dontWait: true), frames.count == 3, let body = frames.last
                else { continue }
                received.withLock { $0.append(body) }
                guard let request = try? WireCodec().decode(ControlRequest.self, from: body),
                    let reply = answer(self, request)
                else { continue }
                _ = try? socket.send([frames[0], Data(), reply], dontWait: true)
            }
        }
        thread.start()
        bound.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Stops answering and waits (at most 2 s) for the thread to close its socket.
    func stop() {
        isStopping.store(true, ordering: .releasing)
        _ = finished.wait(timeout: .now() + 2)
    }

    /// The requests received so far, decoded.
    var requests: [ControlRequest] {
        received.withLock { $0 }.compactMap { try? WireCodec().decode(ControlRequest.self, from: $0) }
    }

    /// An `ok` reply carrying `result`.
    static func ok<Result: Codable & Sendable>(_ request: ControlRequest, _ result: Result) -> Data {
        WireCodec().encode(ControlReply(requestId: request.requestId, result: result))
    }

    /// An error reply.
    static func refuse(_ request: ControlRequest, _ error: WireError) -> Data {
        WireCodec().encode(ControlReply<EmptyResult>(requestId: request.requestId, error: error))
    }

    /// A `wrong_shard` reply naming `owner` under map `epoch`.
    static func wrongShard(_ request: ControlRequest, owner: Int, epoch: UInt64) -> Data {
        var error = WireError(.wrongShard, "this shard does not own the recipient's slot")
        error.shard = owner
        error.mapEpoch = epoch
        return refuse(request, error)
    }
}

/// A map of `count` shards over `slotCount` slots split evenly, at the fake shards' endpoints.
func fakeMap(tag: String, shards count: Int, epoch: UInt64 = 1) -> ShardMap {
    var map = ShardMap.evenlySplit(shards: count) { id in
        ShardMap.Endpoints(
            control: "inproc://fake-shard-\(tag)-\(id)", dispatch: "inproc://none", results: "inproc://none",
            events: "inproc://none", eventsIngest: "inproc://none")
    }
    map.mapEpoch = epoch
    return map
}

/// A first recipient (`r0`, `r1`, …) whose slot falls on `shard` of `map`.
func recipient(on shard: Int, of map: ShardMap) -> RecipientID {
    for number in 0..<100_000 {
        let recipient = RecipientID("r\(number)")
        if map.shard(of: recipient)?.id == shard { return recipient }
    }
    preconditionFailure("no recipient on shard \(shard)")
}

/// A pending reminder due an hour after 2026-01-01T00:00:00Z.
func fakeReminder(_ id: String, of recipient: RecipientID) -> Reminder {
    Reminder(
        id: ReminderID(id), recipient: recipient, content: Content(body: id),
        trigger: Trigger(start: .instant(Date(timeIntervalSince1970: 1_767_229_200))))
}

/// How a fake shard answers `list`: its reminders in key order after the cursor, `limit` a page.
func listPage(_ request: ControlRequest, of reminders: [Reminder]) -> Data {
    guard case .list(_, _, let limit, let cursor, _) = request.command else {
        return FakeShard.refuse(request, WireError(.invalidArgument, "not a list"))
    }
    let sorted = reminders.map { (ReminderKey($0.id, of: $0.recipient).storage, $0) }.sorted { $0.0 < $1.0 }
    let after = cursor?.textKey
    let remaining = sorted.filter { entry in after.map { entry.0 > $0 } ?? true }
    let page = Array(remaining.prefix(limit ?? PageSize.default))
    let next = remaining.count > page.count ? page.last.map { PageCursor(kind: .list, text: $0.0).text } : nil
    let listings = page.map { ReminderListing(reminder: $0.1, state: .pending, nextFireAt: nil, deliveredCount: 0, lastFiredAt: nil) }
    return FakeShard.ok(request, ListResult(reminders: listings, total: cursor == nil && next == nil ? listings.count : nil, nextCursor: next))
}
