import ChimeCore
import ChimeRuntime
import ChimeStore
import ChimeWire
import Foundation
import ZeroMQ
import ChimeSecurity

/// The coordinator's inbound side: control requests (with their role checks), worker
/// results and dispatch announcements.
extension CoordinatorService {
    /// Reads the control requests waiting in the socket into the fair queue (when `isReadable`),
    /// then serves the queue round-robin across connections (``ControlFairQueue``), at most
    /// the turn's allowance of requests while two or more connections send (``ServeAllowance``,
    /// kept near ``controlTurnTarget`` of serving and carrying out) and ``controlTurnBudget``
    /// of serving: what is left waits for the next turn, after due firings were made and
    /// dispatched (issue 15: no op holds the loop; issue 37: no connection delays another's
    /// requests behind its own).
    ///
    /// With security on, each request's role comes from its connection's ZAP user id (the
    /// `User-Id` message property), never from the message.
    func readControl(_ control: Socket, isReadable: Bool, into directives: inout [CoordinatorDirective]) throws {
        if isReadable { try queueControl(control, into: &directives) }
        serveControl(control, into: &directives)
    }

    /// Reads at most the turn's allowance of messages (``ServeAllowance/limit(at:)``, 1,000
    /// at most), for at most ``controlReadBudget``, without blocking: the rest waits in
    /// libzmq, which reads connections in turn, so a new connection's request is read within a
    /// turn whatever another has queued. A connection that does not read its replies is not
    /// served (``UnreadReplies``); the rest are queued per connection, or refused
    /// `rate_limited` past `limits.controlPendingBytesPerConnection` / `controlPendingBytesTotal`.
    private func queueControl(_ control: Socket, into directives: inout [CoordinatorDirective]) throws {
        // The peer's address, its connection's descriptor (``ConnectionBacklog``) and, with keys, its user id.
        let properties = [MessageProperty.peerAddress, MessageProperty.fileDescriptor] + (security == nil ? [] : [MessageProperty.userID])
        let started = ContinuousClock.now
        let limit = inbound.allowance.limit(at: clock.monotonic)
        // The rest of a message with too many frames, a slice per turn.
        guard try control.discardFrames(upTo: Self.framesDiscardedPerTurn) else { return }
        for _ in 0..<limit {
            if ContinuousClock.now - started > Self.controlReadBudget { return }
            guard let message = try control.receiveMessage(
                dontWait: true, properties: properties, maxFrames: configuration.limits.maxFramesPerMessage)
            else { return }
            if message.isTruncated {
                directives += refusalOverFrameCount(message.frames, peerAddress: message.properties[0])
                guard try control.discardFrames(upTo: Self.framesDiscardedPerTurn) else { return }
                continue
            }
            let routing = ControlEnvelope.replyRouting(for: message.frames)
            outbox.replyBacklog.onReceived(
                from: routing, descriptor: message.properties[1].flatMap { Int32($0) }, at: clock.monotonic,
                probe: SystemConnectionProbe())
            guard isServed(message.frames, routing: routing, on: control) else { continue }
            let bytes = message.frames.reduce(Self.queuedRequestOverheadBytes) { $0 + $1.count }
            if !inbound.fairQueue.enqueue(message, bytes: bytes, from: routing) {
                inbound.pendingRefusals += 1
                directives += refusalOverPendingBytes(message.frames, peerAddress: message.properties[0])
            }
        }
    }

    /// Serves queued requests, one per connection in turn, within the turn's budget.
    private func serveControl(_ control: Socket, into directives: inout [CoordinatorDirective]) {
        let started = ContinuousClock.now
        var served = 0
        defer { if served > 0 { inbound.serving = (started, served) } }
        inbound.allowance.noteWaiting(connections: inbound.fairQueue.connectionCount, at: clock.monotonic)
        let limit = inbound.allowance.limit(at: clock.monotonic)
        while served < limit, ContinuousClock.now - started <= Self.controlTurnBudget,
            let (routing, message) = inbound.fairQueue.next()
        {
            served += 1
            // Its connection may have stopped reading since the request was queued.
            guard isServed(message.frames, routing: routing, on: control) else { continue }
            if let retryAfter = inbound.rateLimiter.admit(
                peerAddress: message.properties[0], routingID: message.frames.first.map(Array.init) ?? [], at: clock.monotonic)
            {
                directives += refusalOverRateLimit(message.frames, retryAfterMilliseconds: retryAfter, peerAddress: message.properties[0])
                continue
            }
            inbound.currentPeer = message.properties[security == nil ? 0 : 2]
            if security == nil {
                directives += handleControlMessage(message.frames, from: nil)
            } else {
                // A connection the ZAP handler admitted always has one; anything else (an
                // `inproc://` peer inside this process) gets `forbidden` for every request.
                directives += handleControlMessage(
                    message.frames, from: .some(message.properties[2].flatMap(Principal.init(userID:))))
            }
        }
    }

    /// Whether a request from `routing` is served: not when its connection does not read its
    /// replies (``UnreadReplies``), which is then refused or dropped here.
    private func isServed(_ frames: [Data], routing: [Data], on control: Socket) -> Bool {
        switch outbox.unread.admission(of: routing, at: clock.monotonic) {
        case .serve:
            return true
        case .refuse:
            refuseStalled(frames, on: control)
        case .drop:
            outbox.unread.onRequestDropped(from: routing, at: nil)
        }
        return false
    }

    /// How long one turn reads control messages into the fair queue at most: reading is
    /// cheap, and what a turn does not read waits in libzmq's own per-connection queue.
    static let controlReadBudget = Duration.milliseconds(1)

    /// What a queued request costs beyond its frames' bytes (its arrays, properties and
    /// queue slot), counted against `limits.controlPendingBytes…`.
    static let queuedRequestOverheadBytes = 256

    /// The `rate_limited` answer to a request past `limits.controlPendingBytesPerConnection`
    /// or `controlPendingBytesTotal`, made without reading it, on the ordinary reply path.
    func refusalOverPendingBytes(_ frames: [Data], peerAddress: String?) -> [CoordinatorDirective] {
        let routing = ControlEnvelope.replyRouting(for: frames)
        guard !routing.isEmpty else { return [] }
        let error = WireError(
            .rateLimited,
            "too many requests waiting from this connection (limits.controlPendingBytesPerConnection) or from all (limits.controlPendingBytesTotal); retry in \(Self.stalledRetryAfterMilliseconds) ms",
            retryAfterMilliseconds: Self.stalledRetryAfterMilliseconds)
        // Its requestId when small, so a pipelining client settles the right request: the
        // refusal leaves before the replies to the connection's queued requests.
        let body = frames.count > routing.count ? frames.last : nil
        let requestId = body.flatMap { $0.count <= Self.peekedRequestBytes ? WirePeek.requestId(in: $0) : nil }
        return state.onUndecodableRequest(error, requestId: requestId, from: ClientAddress(routing: routing))
    }

    /// Answers a request of a connection that does not read its replies (``UnreadReplies``)
    /// with `rate_limited` and its `requestId`, sent at once: taken, it resumes the
    /// connection; refused (its queue is still full), the request is dropped unread.
    func refuseStalled(_ frames: [Data], on control: Socket) {
        let routing = ControlEnvelope.replyRouting(for: frames)
        let error = WireError(
            .rateLimited,
            "this connection did not read its replies: replies were dropped and requests not served; read them, then send again",
            retryAfterMilliseconds: Self.stalledRetryAfterMilliseconds)
        // Peeked only in a small request: a large one costs a full JSON parse.
        let body = frames.count > routing.count ? frames.last : nil
        let requestId = body.flatMap { $0.count <= Self.peekedRequestBytes ? WirePeek.requestId(in: $0) : nil }
        let refusal = ControlOutcome.failed(error).encodedReply(requestId: requestId)
        do {
            if try control.send(routing + [refusal], dontWait: true) {
                outbox.unread.onRefusalSent(to: routing)
                outbox.replyBacklog.onSent(to: routing, bytes: refusal.count)
            } else {
                outbox.unread.onRequestDropped(from: routing, at: clock.monotonic)
            }
        } catch let error as ZeroMQError where error.code == .hostUnreachable {
            outbox.unread.onDisconnected(routing)
            outbox.replyBacklog.onDisconnected(routing)
        } catch {
            logger.warning("refusal not sent", ["error": "\(error)"])
        }
    }

    /// The `retryAfterMs` of the refusal a connection that stopped reading gets.
    static let stalledRetryAfterMilliseconds = 100

    /// The largest request (bytes) whose `requestId` a refusal of a stalled connection echoes.
    static let peekedRequestBytes = 4096

    /// The `too_large` answer to a control message with more than `limits.maxFramesPerMessage`
    /// frames, made from its first frames (the routing id), the rest dropped unread.
    func refusalOverFrameCount(_ frames: [Data], peerAddress: String?) -> [CoordinatorDirective] {
        let routing = ControlEnvelope.replyRouting(for: frames)
        let limit = configuration.limits.maxFramesPerMessage
        inbound.peerLog.warning(peerAddress, "rejected control message", ["code": "too_large", "reason": "more than \(limit) frames"])
        guard !routing.isEmpty else { return [] }
        let error = WireError(.tooLarge, "a control message has at most \(limit) frames (limits.maxFramesPerMessage)")
        return state.onUndecodableRequest(error, from: ClientAddress(routing: routing))
    }

    /// Frames of an oversized message dropped per loop turn at most (well under 1 ms of libzmq calls).
    static let framesDiscardedPerTurn = 4096

    /// The `rate_limited` answer, made without reading the request (so without its
    /// `requestId`): the point is to spend next to nothing on a peer over its limit. It takes
    /// the ordinary reply path, so it never overtakes an earlier reply on its connection.
    func refusalOverRateLimit(_ frames: [Data], retryAfterMilliseconds: Int, peerAddress: String?) -> [CoordinatorDirective] {
        let routing = ControlEnvelope.replyRouting(for: frames)
        guard !routing.isEmpty else { return [] }
        let error = WireError(
            .rateLimited,
            "too many requests from \(peerAddress.flatMap { $0.isEmpty ? nil : $0 } ?? "this peer"); retry in \(retryAfterMilliseconds) ms",
            retryAfterMilliseconds: retryAfterMilliseconds)
        return state.onUndecodableRequest(error, from: ClientAddress(routing: routing))
    }

    /// Decodes and answers one control message.
    /// - Parameter peer: `nil` when security is off (every peer then may use every
    ///   operation); else the authenticated peer, or `.some(nil)` for a connection without a
    ///   ZAP user id, which may use none.
    func handleControlMessage(_ frames: [Data], from peer: Principal??) -> [CoordinatorDirective] {
        let started = ContinuousClock.now
        inbound.decodedRequest = nil
        let directives = decideControlMessage(frames, from: peer)
        // An admission stage's refusal is logged for this peer (`inbound.currentPeer`).
        logNotices()
        recordRequest(directives, since: started)
        if frames.last.map({ $0.count >= Self.trimAfterRefusedBytes }) ?? false, directives.contains(where: \.isRefusal) {
            // Decoding a large request that was then refused freed tens of megabytes that
            // glibc keeps for reuse; they go back at the end of the turn, once the message
            // itself is freed too, so a refusal leaves no memory behind.
            telemetry.isMemoryTrimDue = true
        }
        return directives
    }

    /// How long one loop turn serves control requests at most (the last one may take longer:
    /// a request is never split; long listings are paged instead).
    static let controlTurnBudget = Duration.milliseconds(5)

    /// The time a turn aims to spend on control requests, serving them and carrying out its
    /// directives (``ServeAllowance``): a request of another connection waits about one turn.
    static let controlTurnTarget = Duration.milliseconds(2)

    /// Requests at least this large (bytes) are followed by `Allocator.releaseFreePages()` when refused.
    static let trimAfterRefusedBytes = 1 << 20

    /// Decodes one control message (its envelope, then its body, refused unread beyond
    /// `coordinator.maxRequestBytes`), checks the named sounds of a `schedule` against the
    /// sounds directory, and hands the request with its peer's grant to the state's admission
    /// (``CoordinatorState/onControlRequest(_:at:monotonic:)``).
    func decideControlMessage(_ frames: [Data], from peer: Principal??) -> [CoordinatorDirective] {
        let envelope: ControlEnvelope
        do {
            envelope = try ControlEnvelope.parse(frames)
        } catch {
            inbound.peerLog.warning(
                inbound.currentPeer, "rejected control message", ["code": "\(error.code.rawValue)", "reason": "\(error.message)"])
            let address = ClientAddress(routing: ControlEnvelope.replyRouting(for: frames))
            return address.routing.isEmpty ? [] : state.onUndecodableRequest(error, from: address)
        }
        // With keys, each key is a tenant: its request ids are its own.
        let address = ClientAddress(routing: envelope.routing, tenant: peer.flatMap { $0?.publicKey })
        if envelope.body.count > configuration.coordinator.maxRequestBytes {
            let error = WireError(
                .tooLarge,
                "the request is \(envelope.body.count) bytes; the limit is \(configuration.coordinator.maxRequestBytes)")
            inbound.peerLog.warning(
                inbound.currentPeer, "rejected control message", ["code": "\(error.code.rawValue)", "bytes": .int(envelope.body.count)])
            return state.onUndecodableRequest(error, from: address)
        }
        let request: ControlRequest
        do throws(WireError) {
            request = try inbound.codec.decodeRequest(envelope.body)
        } catch {
            inbound.peerLog.warning(
                inbound.currentPeer, "rejected control request", ["code": "\(error.code.rawValue)", "reason": "\(error.message)"])
            return state.onUndecodableRequest(error, requestId: WirePeek.requestId(in: envelope.body), from: address)
        }
        inbound.decodedRequest = (request.operation, request.isMutating)
        // A move step that waits for a fresh read of the map register: what the reader handed
        // over since the turn began counts now.
        if case .move(let move) = request.command, move.step.readsMapRecord { takeMapReads() }
        let grant = peer.flatMap { $0 }.flatMap { security?.policy.grants[$0.publicKey] }
        let incoming = IncomingRequest(
            request: request, client: address, bodyBytes: envelope.body.count, peer: peer, grant: grant,
            soundProblems: setup.sounds?.problems(in: request) ?? [:])
        return state.onControlRequest(incoming, at: clock.now, monotonic: clock.monotonic)
    }

    /// Reads acknowledgements and heartbeats. With security on, a message counts only when
    /// its connection's key (ZAP user id) is the key its `worker` announced itself with on the
    /// dispatch socket: one `zmq_msg_gets` and one dictionary lookup per message (a batch of
    /// acknowledgements), not per acknowledgement.
    func readResults(_ results: Socket, into directives: inout [CoordinatorDirective]) throws {
        guard try results.discardFrames(upTo: Self.framesDiscardedPerTurn) else { return }
        let properties = security == nil ? [] : [MessageProperty.userID]
        for _ in 0..<1000 {
            guard let received = try results.receiveMessage(
                dontWait: true, properties: properties, maxFrames: configuration.limits.maxFramesPerMessage)
            else { return }
            let frames = received.frames
            let sender = received.properties.first?.flatMap(Principal.init(userID:))
            if received.isTruncated {
                inbound.peerLog.warning(sender?.publicKey, "dropped worker message", ["reason": "more than \(configuration.limits.maxFramesPerMessage) frames"])
                guard try results.discardFrames(upTo: Self.framesDiscardedPerTurn) else { return }
                continue
            }
            do {
                let message = try inbound.codec.decodeWorkerMessage(frames)
                if security != nil {
                    guard let bound = inbound.workerRoutes.key(of: message.worker) else {
                        // Not announced on dispatch yet: it holds no firing, and its next heartbeat counts.
                        logger.debug("results before the worker announced itself", ["worker": message.worker.rawValue])
                        continue
                    }
                    guard bound == sender?.publicKey else {
                        inbound.peerLog.warning(
                            sender?.publicKey, "dropped worker message from a connection without the worker's key",
                            ["worker": "\(message.worker.rawValue)", "acks": .int(message.acks.count)])
                        continue
                    }
                }
                directives += state.onWorkerMessage(message, at: clock.now, monotonic: clock.monotonic)
            } catch {
                inbound.peerLog.warning(sender?.publicKey, "dropped worker message", ["code": "\(error.code.rawValue)", "reason": "\(error.message)"])
            }
        }
    }

    /// Reads the workers' announcements on the dispatch ROUTER: `[identity, WorkerMessage]`.
    func readAnnouncements(_ dispatch: Socket, into directives: inout [CoordinatorDirective]) throws {
        guard try dispatch.discardFrames(upTo: Self.framesDiscardedPerTurn) else { return }
        // The connection's descriptor (``ConnectionBacklog``) and, with keys, the peer's user id.
        let properties = [MessageProperty.fileDescriptor] + (security == nil ? [] : [MessageProperty.userID])
        for _ in 0..<1000 {
            // A routing id and one JSON frame: a third frame already makes it wrong.
            guard let received = try dispatch.receiveMessage(dontWait: true, properties: properties, maxFrames: 3) else { return }
            let frames = received.frames
            let sender = received.properties.dropFirst().first?.flatMap(Principal.init(userID:))
            if received.isTruncated {
                inbound.peerLog.warning(sender?.publicKey, "dropped dispatch announcement", ["reason": "more than 2 frames"])
                guard try dispatch.discardFrames(upTo: Self.framesDiscardedPerTurn) else { return }
                continue
            }
            guard frames.count == 2 else {
                inbound.peerLog.warning(sender?.publicKey, "dropped dispatch announcement", ["reason": "expected 2 frames, got \(frames.count)"])
                continue
            }
            do {
                let message = try inbound.codec.decodeWorkerMessage([frames[1]])
                if security != nil, sender?.publicKey == nil { continue }
                guard claimRoute(of: message.worker, on: frames[0], key: sender?.publicKey) else { continue }
                outbox.dispatchBacklog.onReceived(
                    from: [frames[0]], descriptor: received.properties[0].flatMap { Int32($0) }, at: clock.monotonic,
                    probe: SystemConnectionProbe())
                directives += state.onWorkerMessage(message, viaDispatch: true, at: clock.now, monotonic: clock.monotonic)
            } catch {
                inbound.peerLog.warning(sender?.publicKey, "dropped dispatch announcement", ["code": "\(error.code.rawValue)", "reason": "\(error.message)"])
            }
        }
    }

    /// Records the connection a worker announced itself on (``WorkerRoutes``): its routing id
    /// must be the worker's id (or the id, `/` and a suffix), and a live worker's route stays
    /// with its key (another key's claim is ignored), a dead one's may move.
    /// - Returns: whether the announcement counts.
    func claimRoute(of worker: WorkerID, on routingID: Data, key: String?) -> Bool {
        let claim = inbound.workerRoutes.claim(
            worker, on: routingID, key: key, isAlive: state.isAlive(worker), isKnown: { state.dispatch.workers[$0] != nil })
        switch claim {
        case .accepted:
            return true
        case .refusedForeignRoutingID:
            inbound.peerLog.warning(
                key, "dropped dispatch announcement", ["reason": "worker id does not match its routing id", "worker": "\(worker.rawValue)"])
        case .refusedHeldByLiveWorker:
            inbound.peerLog.warning(
                key, "dropped dispatch announcement", ["reason": "worker id held by a live worker with another key", "worker": "\(worker.rawValue)"])
        }
        return false
    }
}
