import ChimeStore
import ChimeWire
import Foundation
import ZeroMQ

/// The store-full mode: a full disk is a mode, not an exit.
///
/// When a journal write finds no space (`ENOSPC`, `EDQUOT`), the journal writer keeps every
/// entry it was given, in order, and retries the write every
/// `JournalWriter.noSpaceRetryInterval` (see `JournalWriter`); the loop notices through the
/// writer's status and, until a write succeeds again:
/// - refuses every request that would change something (`ControlRequest.isMutating`), and
///   `snapshot`, `compact`, `store` and every slot-move step (`move`, its `status` included:
///   a mover must never act on a fact that is not durable, such as a slice this shard adopted
///   in memory only), with `store_full` — except a retry of a request already applied (same
///   `requestId`), whose remembered reply waits for its entries;
/// - answers reads at once from the live state (`list`, `status`, `events`, …), which may
///   show the changes whose entries wait to be written;
/// - keeps firing and taking acknowledgements: their entries queue behind the others, and
///   firing pauses once 65,536 entries wait (`maxUndurableEntries`), as on a slow disk;
/// - sends no reply and no badge event that depends on an unwritten entry.
///
/// So nothing acknowledged to a client is lost, and no entry is lost while the process
/// lives. If it dies in the mode, the waiting entries are lost as in a crash: the requests
/// among them were never answered, and firings and acknowledgements are redone by recovery
/// with the same firing ids (at-least-once).
extension CoordinatorService {
    /// While the store is full: the directives for a request that must not wait for the
    /// journal (a refusal, or a read answered at once through `immediateReplies`); `nil`
    /// for a request that takes the ordinary path (a retried request already applied).
    func answerWhileStoreFull(_ request: ControlRequest, from client: ClientAddress) -> [CoordinatorDirective]? {
        let isStoreOperation = [.snapshot, .compact, .store, .move].contains(request.operation)
        if request.isMutating || isStoreOperation {
            if request.isMutating, let requestId = request.requestId, state.requestLog.reply(to: client.requestLogKey(requestId)) != nil {
                return nil
            }
            immediateReplies.append((storeFullReply(to: request), client))
            return []
        }
        let directives = state.onRequest(request, from: client, at: clock.now)
        // A read journals nothing; should one ever, its reply waits for the journal as usual.
        if directives.contains(where: { if case .append = $0 { true } else { false } }) { return directives }
        for directive in withStoreMode(directives) {
            switch directive {
            case .reply(let outcome, let requestId, let client):
                immediateReplies.append((outcome.encodedReply(requestId: requestId), client))
            case .replyEncoded(let body, let client):
                immediateReplies.append((body, client))
            case .append, .dispatch, .publish:
                continue
            }
        }
        return []
    }

    /// The `store_full` refusal of `request`.
    func storeFullReply(to request: ControlRequest) -> Data {
        let error = WireError(
            .storeFull,
            "the coordinator's store is full: \(request.operation.rawValue) is refused until space returns (reads and firing go on)")
        return codec.encode(ControlReply<EmptyResult>(requestId: request.requestId, error: error))
    }

    /// Adds `storeFull` to a `status` reply (with a file store).
    func withStoreMode(_ directives: [CoordinatorDirective]) -> [CoordinatorDirective] {
        guard case .file = storage else { return directives }
        return directives.map { directive in
            guard case .reply(.status(var report), let requestId, let client) = directive else { return directive }
            report.storeFull = isStoreFull
            return .reply(.status(report), requestId: requestId, to: client)
        }
    }

    /// Enters or leaves the store-full mode (logged, and told to the supervisor).
    func noteStoreMode(isFull: Bool) {
        isStoreFull = isFull
        probe.updateStore { $0.isFull = isFull }
        if isFull {
            logger.warning(
                "the store is full: refusing changes with store_full, answering reads, firing what is durable; retrying the journal write",
                ["unwritten": .int(journalWriter?.undurableCount ?? 0)])
        } else {
            logger.info("the store has space again: every waiting entry is written; accepting changes")
        }
        notifier?.notifyStatus(activeStatusLine())
    }

    /// Sends the replies that wait for nothing.
    func sendImmediateReplies(on control: Socket) {
        guard !immediateReplies.isEmpty else { return }
        for (body, client) in immediateReplies { sendReply(body, to: client, on: control) }
        immediateReplies.removeAll(keepingCapacity: true)
    }
}
