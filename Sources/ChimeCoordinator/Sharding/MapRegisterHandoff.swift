import ChimeJournal
import ChimeWire
import Foundation
import Synchronization

/// Where the map register's reader thread (``MapRegisterFollower``) leaves what it read and
/// the coordinator's loop takes it: the newest record not yet taken, a read error to log,
/// and the count of fresh reads done (the `move` op's tickets). One `Mutex` guards it all;
/// neither side holds it across a register call or a state change.
///
/// Errors are rate-limited here, not on the loop: the first failed read after a good one
/// (or after the start) is handed on at once, later ones at most once per
/// ``errorReportInterval``, each with the count of failed reads it stands for. A message
/// that differs only by a number (libcurl's "timed out after 5001 milliseconds") thus still
/// logs at most once a minute.
final class MapRegisterHandoff: Sendable {
    /// What the loop takes at once.
    struct Taken: Sendable, Equatable {
        /// The newest record read since the last take; `nil`: none (or the register has none).
        var record: SlotMapRecord?
        /// A read error to log.
        var error: ReadError?
        /// Fresh reads done so far: a ticket from ``requestFreshRead()`` at or below this was read.
        var freshReadsDone: UInt64
    }

    /// A failed read to log, with how many failed reads it stands for (itself included).
    struct ReadError: Sendable, Equatable {
        var message: String
        var failedReads: Int
    }

    /// How long after a reported read error the next one is held back, at most.
    static let errorReportInterval = Duration.seconds(60)

    private struct Slot {
        var record: SlotMapRecord?
        var error: ReadError?
        /// When the last error was handed on; `nil` since the last good read.
        var lastReportedAt: ContinuousClock.Instant?
        /// Failed reads since the last error handed on.
        var failedSinceReport = 0
        var freshReadsRequested: UInt64 = 0
        var freshReadsStarted: UInt64 = 0
        var freshReadsDone: UInt64 = 0
        var isStopRequested = false
    }

    private let slot = Mutex(Slot())

    /// An empty hand-off.
    init() {}

    /// Leaves a read's outcome for the loop: a record replaces any not yet taken (reads run
    /// one after another on one thread, so the last is the newest); `nil` (no record) and an
    /// error leave a waiting record in place.
    /// - Parameters:
    ///   - freshRead: the ticket this read served (``startFreshRead()``), `nil` for a periodic read.
    ///   - now: when the read ended (for the error rate limit).
    func hand(_ outcome: Result<SlotMapRecord?, WireError>, freshRead: UInt64? = nil, at now: ContinuousClock.Instant) {
        slot.withLock { slot in
            if let freshRead { slot.freshReadsDone = max(slot.freshReadsDone, freshRead) }
            switch outcome {
            case .success(let record):
                if let record { slot.record = record }
                slot.lastReportedAt = nil
                slot.failedSinceReport = 0
            case .failure(let error):
                slot.failedSinceReport += 1
                if let last = slot.lastReportedAt, now - last < Self.errorReportInterval { return }
                slot.error = ReadError(message: error.message, failedReads: slot.failedSinceReport)
                slot.lastReportedAt = now
                slot.failedSinceReport = 0
            }
        }
    }

    /// What was handed since the last take (the record and error are cleared).
    func take() -> Taken {
        slot.withLock { slot in
            defer {
                slot.record = nil
                slot.error = nil
            }
            return Taken(record: slot.record, error: slot.error, freshReadsDone: slot.freshReadsDone)
        }
    }

    /// Asks for a read that starts after this call.
    /// - Returns: its ticket: once ``Taken/freshReadsDone`` reaches it, the record taken
    ///   with it (or before) is the register as it was after this call.
    func requestFreshRead() -> UInt64 {
        slot.withLock { slot in
            slot.freshReadsRequested = slot.freshReadsStarted + 1
            return slot.freshReadsRequested
        }
    }

    /// For the reader thread: the ticket of a fresh read to start now, `nil` when none is
    /// asked for. One read serves every request made before it starts.
    func startFreshRead() -> UInt64? {
        slot.withLock { slot in
            guard slot.freshReadsRequested > slot.freshReadsStarted else { return nil }
            slot.freshReadsStarted = slot.freshReadsRequested
            return slot.freshReadsStarted
        }
    }

    /// Asks the reader thread to end before its next register call.
    func requestStop() { slot.withLock { $0.isStopRequested = true } }

    /// Whether ``requestStop()`` was called.
    var isStopRequested: Bool { slot.withLock { $0.isStopRequested } }
}
