import ChimeWire
import Foundation

/// The store-full stage: a full disk is a mode, not an exit (`CoordinatorService+StoreFull.swift`
/// tells the whole story). While the journal writer finds no space:
/// - every request that would change something (`ControlRequest.isMutating`), `snapshot`,
///   `compact`, `store` and every slot-move step (`move`, its `status` included: a mover must
///   never act on a fact that is not durable, such as a slice this shard adopted in memory
///   only), is refused `store_full` — except a retry of a request already applied (same
///   `requestId`), whose remembered reply waits for its entries as usual;
/// - reads are answered at once from the live state (`list`, `status`, `events`, …), which
///   may show the changes whose entries wait to be written;
/// - firing and acknowledgements go on (their entries queue behind the others).
extension CoordinatorState {
    /// While the store is full: the directives for a request that must not wait for the
    /// journal (a refusal, or a read answered at once); `nil` for a request that takes the
    /// ordinary path (a retried request already applied).
    mutating func admitWhileStoreFull(
        _ request: ControlRequest, from client: ClientAddress, at now: Date, monotonic: Double?
    ) -> [CoordinatorDirective]? {
        var refusesMove = request.operation == .move
        #if DEBUG
        if sabotage == .answersMoveStepsWhileFull { refusesMove = false }
        #endif
        if request.isMutating || Self.storeOperations.contains(request.operation) || refusesMove {
            if request.isMutating, let requestId = request.requestId, requestLog.reply(to: client.requestLogKey(requestId)) != nil {
                return nil
            }
            return [.replyAtOnce(Self.storeFullRefusal(of: request), to: client)]
        }
        let directives = onRequest(request, from: client, at: now, monotonic: monotonic)
        // A read journals nothing; should one ever, its reply waits for the journal as usual.
        if directives.contains(where: { if case .append = $0 { true } else { false } }) { return directives }
        return directives.compactMap { directive in
            switch directive {
            case .reply(let outcome, let requestId, let client): .replyAtOnce(outcome.encodedReply(requestId: requestId), to: client)
            case .replyEncoded(let body, let client): .replyAtOnce(body, to: client)
            default: nil
            }
        }
    }

    /// The `store_full` refusal of `request`, encoded.
    static func storeFullRefusal(of request: ControlRequest) -> Data {
        let error = WireError(
            .storeFull,
            "the coordinator's store is full: \(request.operation.rawValue) is refused until space returns (reads and firing go on)")
        return ControlOutcome.failed(error).encodedReply(requestId: request.requestId)
    }
}
