import ChimeStore
import ChimeWire
import Foundation
import ZeroMQ

/// The store-full mode: a full disk is a mode, not an exit.
///
/// When a journal write finds no space (`ENOSPC`, `EDQUOT`), the journal writer keeps every
/// entry it was given, in order, and retries the write every
/// `JournalWriter.noSpaceRetryInterval` (see `JournalWriter`); the loop notices through the
/// writer's status (`flushOutbox`) and tells the state (`CoordinatorState.onStoreMode`), whose
/// store-full stage (`CoordinatorState+StoreFull.swift`) then, until a write succeeds again:
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
    /// Enters or leaves the store-full mode: the state decides by it, the probe's `/readyz`
    /// and the supervisor's status line show it, and it is logged.
    func noteStoreMode(isFull: Bool) {
        state.onStoreMode(isFull: isFull)
        probe.updateStore { $0.isFull = isFull }
        if isFull {
            logger.warning(
                "the store is full: refusing changes with store_full, answering reads, firing what is durable; retrying the journal write",
                ["unwritten": .int(store.journalWriter?.undurableCount ?? 0)])
        } else {
            logger.info("the store has space again: every waiting entry is written; accepting changes")
        }
        notifier?.notifyStatus(activeStatusLine())
    }
}
