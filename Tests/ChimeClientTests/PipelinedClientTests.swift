import ChimeClient
import ChimeWire
import Foundation
import Synchronization
import Testing
import ZeroMQ

/// The pipelined client against a holding stand-in for a coordinator: a ROUTER on
/// `inproc://` that keeps every request until `decide` answers some of it, so tests choose the
/// order and the timing of replies.
@Suite struct PipelinedClientTests {
    /// One request held by the stand-in: its routing frame, bytes and `requestId`.
    struct Held: Sendable {
        var routing: Data
        var body: Data
        var requestId: String?
    }

    final class HoldingRouter: Sendable {
        let endpoint: String
        let received = Mutex<[Held]>([])
        let mostHeld = Atomic<Int>(0)
        let isStopping = Atomic<Bool>(false)
        let finished = DispatchSemaphore(value: 0)

        /// `decide(held, idle)` returns the held requests to answer now with their replies
        /// (by index into `held`); it is called after each request and after each idle 10 ms.
        init(context: Context, tag: String, decide: @escaping @Sendable ([Held], Bool) -> [(Int, Data)]) throws {
            endpoint = "inproc://pipelined-\(tag)"
            let socket = try Socket(.router, context: context)
            try socket.set(.linger(milliseconds: 0))
            try socket.bind(to: endpoint)
            let transfer = Transfer(socket)
            Thread { [self] in
                let socket = transfer.socket
                defer { socket.close(); finished.signal() }
                let poller = Poller()
                poller.register(socket, for: .readable)
                var held: [Held] = []
                while !isStopping.load(ordering: .acquiring) {
                    let isIdle = ((try? poller.poll(timeout: .milliseconds(10))) ?? 0) == 0
                    if !isIdle, case let frames? = try? socket.receiveMessage(dontWait: true), frames.count == 3 {
                        let requestId = (try? JSONDecoder().decode(Head.self, from: frames[2]))?.requestId
                        let request = Held(routing: frames[0], body: frames[2], requestId: requestId)
                        held.append(request)
                        received.withLock { $0.append(request) }
                        mostHeld.store(max(mostHeld.load(ordering: .relaxed), held.count), ordering: .relaxed)
                    }
                    let answers = decide(held, isIdle)
                    for (index, reply) in answers { _ = try? socket.send([held[index].routing, Data(), reply], dontWait: true) }
                    let answered = Set(answers.map(\.0))
                    held = held.enumerated().filter { !answered.contains($0.offset) }.map(\.element)
                }
            }.start()
        }

        func stop() {
            isStopping.store(true, ordering: .releasing)
            _ = finished.wait(timeout: .now() + 2)
        }

        var requestIds: [String?] { received.withLock { $0.map(\.requestId) } }

        struct Head: Decodable { var requestId: String? }
        struct Transfer: @unchecked Sendable { let socket: Socket; init(_ socket: Socket) { self.socket = socket } }
    }

    static func ok(_ requestId: String?, _ text: String) -> Data {
        Data(#"{"ok":true,"requestId":"\#(requestId ?? "")","result":{"echo":"\#(text)"}}"#.utf8)
    }

    static func ping(_ id: String) -> Data { Data(#"{"op":"ping","requestId":"\#(id)"}"#.utf8) }

    @Test func repliesInAnotherOrderAreMatchedByRequestID() async throws {
        let context = try Context()
        let router = try HoldingRouter(context: context, tag: "reorder") { held, _ in
            held.count < 8 ? [] : held.indices.reversed().map { ($0, Self.ok(held[$0].requestId, held[$0].requestId ?? "")) }
        }
        defer { router.stop() }
        let client = try PipelinedClient(endpoint: router.endpoint, window: 8, timeout: .seconds(5), context: context)
        defer { client.close() }
        let replies = try await withThrowingTaskGroup(of: (Int, Data).self) { group in
            for number in 0..<8 {
                group.addTask { (number, try await client.exchange(Self.ping("q\(number)"), requestId: "q\(number)")) }
            }
            return try await group.reduce(into: [Int: Data]()) { $0[$1.0] = $1.1 }
        }
        for number in 0..<8 {
            #expect(replies[number] == Self.ok("q\(number)", "q\(number)"))
        }
    }

    @Test func rateLimitedWithoutARequestIDSettlesTheOldestWhichIsSentAgainAfterItsWait() async throws {
        let context = try Context()
        let refusedAt = Mutex<ContinuousClock.Instant?>(nil)
        let router = try HoldingRouter(context: context, tag: "limited") { held, _ in
            held.indices.map { index in
                let first = refusedAt.withLock { at -> Bool in
                    guard at == nil else { return false }
                    at = .now
                    return true
                }
                // As the coordinator sends it: no requestId (it was not read).
                return (index, first
                    ? Data(#"{"ok":false,"error":{"code":"rate_limited","message":"too many","retryAfterMs":150}}"#.utf8)
                    : Self.ok(held[index].requestId, "late"))
            }
        }
        defer { router.stop() }
        let client = try PipelinedClient(endpoint: router.endpoint, timeout: .seconds(5), context: context)
        defer { client.close() }
        let reply = try await client.exchange(Self.ping("limited-1"), requestId: "limited-1")
        let waited = ContinuousClock.now - (try #require(refusedAt.withLock { $0 }))
        #expect(reply == Self.ok("limited-1", "late"))
        #expect(router.requestIds == ["limited-1", "limited-1"])
        #expect(waited >= .milliseconds(150))
    }

    /// A slot that stays in motion past every wait: after 20 waits (21 sends of the same
    /// request) the `try_again` reply itself is the answer, in both clients, and a refusal
    /// that is `rate_limited` still ends as `rate_limited`.
    @Test func aTryAgainThatOutlastsEveryWaitIsReturnedAsItIs() async throws {
        let context = try Context()
        let tryAgain = Data(#"{"ok":false,"requestId":"moving","error":{"code":"try_again","message":"slot 7 is moving","retryAfterMs":1}}"#.utf8)
        let limited = Data(#"{"ok":false,"requestId":"busy","error":{"code":"rate_limited","message":"too many","retryAfterMs":1}}"#.utf8)
        let router = try HoldingRouter(context: context, tag: "moving") { held, _ in
            held.indices.map { ($0, held[$0].requestId == "busy" ? limited : tryAgain) }
        }
        defer { router.stop() }
        let pipelined = try PipelinedClient(endpoint: router.endpoint, timeout: .seconds(5), context: context)
        defer { pipelined.close() }
        #expect(try await pipelined.exchange(Data(#"{"op":"ping","requestId":"moving"}"#.utf8), requestId: "moving") == tryAgain)
        #expect(router.requestIds == Array(repeating: "moving", count: ControlClient.maximumRateLimitedWaits + 1))

        let blocking = try ControlClient(endpoint: router.endpoint, timeout: .seconds(5), retries: 0, context: context)
        #expect(try blocking.exchange(Data(#"{"op":"ping","requestId":"moving"}"#.utf8)) == tryAgain)
        #expect(router.requestIds.count == 2 * (ControlClient.maximumRateLimitedWaits + 1))
        do {
            _ = try blocking.exchange(Data(#"{"op":"ping","requestId":"busy"}"#.utf8))
            Issue.record("a refusal past every wait was returned")
        } catch {
            #expect(error.code == .rateLimited)
            #expect(error.message == "the coordinator still refused the request after 20 waits")
        }
    }

    @Test func anUnansweredAttemptIsSentAgainUnchangedThenUnavailable() async throws {
        let context = try Context()
        let router = try HoldingRouter(context: context, tag: "silent") { _, _ in [] }
        defer { router.stop() }
        let client = try PipelinedClient(endpoint: router.endpoint, timeout: .milliseconds(150), retries: 2, context: context)
        defer { client.close() }
        for id in ["silent-1", "silent-2"] {
            do {
                _ = try await client.exchange(Self.ping(id), requestId: id)
                Issue.record("\(id) was answered by a silent coordinator")
            } catch {
                #expect(error.code == .unavailable)
            }
        }
        #expect(router.requestIds == Array(repeating: "silent-1", count: 3) + Array(repeating: "silent-2", count: 3))
    }

    @Test func theWindowBoundsRequestsInFlight() async throws {
        let context = try Context()
        // Answers only after 10 ms without a request: a client that ignored its window would
        // pile every request up here first.
        let router = try HoldingRouter(context: context, tag: "window") { held, isIdle in
            isIdle ? held.indices.map { ($0, Self.ok(held[$0].requestId, "")) } : []
        }
        defer { router.stop() }
        let client = try PipelinedClient(endpoint: router.endpoint, window: 4, timeout: .seconds(5), context: context)
        defer { client.close() }
        let count = try await withThrowingTaskGroup(of: Data.self) { group in
            for number in 0..<40 { group.addTask { try await client.exchange(Self.ping("w\(number)"), requestId: "w\(number)") } }
            return try await group.reduce(0) { count, _ in count + 1 }
        }
        #expect(count == 40)
        #expect(router.mostHeld.load(ordering: .relaxed) == 4)
    }

    @Test func closeSettlesWhatIsWaitingAsUnavailable() throws {
        let context = try Context()
        let router = try HoldingRouter(context: context, tag: "close") { _, _ in [] }
        defer { router.stop() }
        let client = try PipelinedClient(endpoint: router.endpoint, timeout: .seconds(30), context: context)
        let outcome = Mutex<Result<Data, WireError>?>(nil)
        let settled = DispatchSemaphore(value: 0)
        client.submit(Self.ping("c1"), requestId: "c1") { result in
            outcome.withLock { $0 = result }
            settled.signal()
        }
        client.close()
        #expect(settled.wait(timeout: .now() + 5) == .success)
        guard case .failure(let error)? = outcome.withLock({ $0 }) else {
            Issue.record("expected a failure, got \(String(describing: outcome.withLock { $0 }))")
            return
        }
        #expect(error.code == .unavailable)
        // A closed client refuses at once.
        client.submit(Self.ping("c2"), requestId: "c2") { result in outcome.withLock { $0 = result } }
        guard case .failure(let refused)? = outcome.withLock({ $0 }) else {
            Issue.record("a closed client must refuse")
            return
        }
        #expect(refused.code == .unavailable)
    }

    @Test func aWindowBelowOneIsRefused() {
        #expect(throws: WireError.self) { try PipelinedClient(endpoint: "inproc://nowhere", window: 0) }
    }
}
