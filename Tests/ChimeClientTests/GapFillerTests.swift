import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeClient


/// The live subscriber's gap filling, pure: live events and `events` replies in, the
/// events to print out, time passed in.
@Suite struct GapFillerTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z

    func event(_ seq: UInt64, _ reminder: String? = nil) -> FireEvent {
        FireEvent(
            seq: seq, publisher: "w",
            firing: Firing(
                reminderId: ReminderID(reminder ?? "r\(seq)"), recipient: "a", dueAt: Self.t0, content: Content()),
            firedAt: Self.t0)
    }

    func at(_ seconds: Double) -> Date { Self.t0.addingTimeInterval(seconds) }

    @Test func startsAtTheSettledWatermarkAndDeliversContiguousLiveEventsAtOnce() {
        var filler = GapFiller(since: nil)
        #expect(filler.isFetchDue(at: at(0)))
        #expect(filler.fetchAfter == UInt64(Int64.max))
        #expect(filler.onLive(event(11), at: at(0)).isEmpty, "no watermark yet: waits for the first fetch")
        #expect(filler.onFetched([], through: 10, at: at(0)).map(\.seq) == [11])
        #expect(filler.onLive(event(12), at: at(0.1)).map(\.seq) == [12])
        #expect(filler.watermark == 12)
        #expect(!filler.isFetchDue(at: at(0.5)))
        #expect(filler.isFetchDue(at: at(1)), "idle reconciliation every second")
    }

    @Test func aRestartJumpWaitsUntilTheMissedEventsAreReplayedInSeqOrder() {
        var filler = GapFiller(since: 5)
        #expect(filler.onFetched([], through: 5, at: at(0)).isEmpty)
        #expect(filler.onLive(event(6), at: at(0.1)).map(\.seq) == [6])
        // The coordinator restarted: 7 and 8 were lost live, the new epoch starts at 1,048,577.
        let newEpoch: UInt64 = 1_048_577
        #expect(filler.onLive(event(newEpoch + 1), at: at(3)).isEmpty)
        #expect(filler.isFetchDue(at: at(3.02)))
        #expect(filler.onFetched([event(7), event(8), event(newEpoch)], through: 8, at: at(3.02)).map(\.seq) == [7, 8],
                "the gap first; what follows waits while seqs before it are unsettled")
        #expect(filler.hasWaitingEvents)
        #expect(filler.onFetched([event(newEpoch), event(newEpoch + 1)], through: newEpoch + 1, at: at(3.04)).map(\.seq)
            == [newEpoch, newEpoch + 1], "each once, in seq order")
        #expect(!filler.hasWaitingEvents)
        #expect(filler.watermark == newEpoch + 1)
    }

    /// A catch-up that never answers while live events keep coming: at most
    /// `maximumWaiting` wait; past it the oldest go anyway, in order, and so on.
    @Test func theEventsWaitingForAFillThatNeverComesAreBounded() {
        var settings = GapFiller.Settings()
        settings.maximumWaiting = 3
        var filler = GapFiller(since: nil, settings: settings)
        filler.onFetchFailed(at: at(0))
        #expect(filler.onLive(event(11), at: at(0.1)).isEmpty, "no watermark yet")
        #expect(filler.onLive(event(12), at: at(0.2)).isEmpty)
        #expect(filler.onLive(event(14), at: at(0.3)).isEmpty)
        #expect(filler.waiting.count == 3)
        #expect(filler.onLive(event(15), at: at(0.4)).map(\.seq) == [11, 12], "past the bound: the oldest, up to the gap")
        #expect(filler.watermark == 12)
        #expect(filler.waiting.map(\.event.seq) == [14, 15])
        #expect(filler.onLive(event(13), at: at(0.5)).map(\.seq) == [13, 14, 15])
        #expect(filler.onLive(event(12), at: at(0.6)).isEmpty, "delivered once")
        // A hostile seq at the top of the range settles without an overflow.
        #expect(filler.onLive(event(UInt64.max), at: at(0.7)).isEmpty)
        #expect(filler.onLive(event(UInt64.max - 1), at: at(0.8)).isEmpty)
        #expect(filler.onLive(event(17), at: at(0.9)).isEmpty)
        #expect(filler.onLive(event(18), at: at(1.0)).map(\.seq) == [17, 18], "past the bound again")
        #expect(filler.waiting.map(\.event.seq) == [UInt64.max - 1, UInt64.max])
        #expect(filler.onLive(event(19), at: at(1.1)).map(\.seq) == [19])
        #expect(filler.onLive(event(UInt64.max, "other"), at: at(1.2)).isEmpty)
        #expect(filler.onLive(event(UInt64.max, "third"), at: at(1.3)).map(\.seq) == [UInt64.max - 1, UInt64.max, UInt64.max, UInt64.max])
        #expect(filler.watermark == UInt64.max)
        #expect(filler.waiting.isEmpty)
        #expect(filler.onLive(event(5, "late"), at: at(1.4)).map(\.seq) == [5], "at W + 1 or below: at once, W stays")
        #expect(filler.watermark == UInt64.max)
    }

    /// A copy of a waiting firing with a lower seq (a replay of its first attempt) takes the
    /// place of that seq: the stream stays in seq order and drains through it.
    @Test func aWaitingFiringsCopyWithALowerSeqTakesItsPlaceInOrder() {
        var filler = GapFiller(since: 10)
        #expect(filler.onFetched([], through: 10, at: at(0)).isEmpty)
        #expect(filler.onLive(event(13, "x"), at: at(0.1)).isEmpty, "11 and 12 are not settled")
        #expect(filler.onLive(event(12, "y"), at: at(0.2)).isEmpty)
        #expect(filler.onLive(event(11, "x"), at: at(0.3)).map(\.seq) == [11, 12], "x at 11, then y; its copy at 13 is gone")
        #expect(filler.waiting.isEmpty)
        #expect(filler.watermark == 12)
    }

    /// A refused catch-up (`wrong_shard`: the recipient's slot moved away) cannot fill a gap:
    /// the waiting live events go once they have waited `maximumWait` from the refusal, not
    /// never (a failed fetch alone starts no wait).
    @Test func aRefusedCatchUpReleasesTheWaitingEventsAfterTheWait() {
        var filler = GapFiller(since: 18)
        #expect(filler.onFetched([], through: 18, at: at(0)).isEmpty)
        #expect(filler.onLive(event(57), at: at(1)).isEmpty, "19…56 are not settled")
        filler.onFetchFailed(at: at(1.02))
        #expect(filler.onTick(at: at(10)).isEmpty, "an unanswered fetch starts no wait")
        filler.onFetchRefused(at: at(10.02))
        #expect(filler.onTick(at: at(12.01)).isEmpty)
        #expect(filler.onTick(at: at(12.02)).map(\.seq) == [57])
        #expect(filler.watermark == 57)
        #expect(!filler.isFetchDue(at: at(10.03)))
    }

    /// Before the watermark is known, a first catch-up that is refused (`wrong_shard`) or not
    /// answered is retried once a second, not at every turn of the receive loop.
    @Test func firstCatchUpRetriesArePacedLikeTheIdleReconciliation() {
        var filler = GapFiller(since: nil)
        #expect(filler.isFetchDue(at: at(0)))
        filler.onFetchRefused(at: at(0))
        #expect(filler.onLive(event(40), at: at(0.1)).isEmpty)
        #expect(!filler.isFetchDue(at: at(0.99)))
        #expect(filler.isFetchDue(at: at(1)))
        filler.onFetchFailed(at: at(1))
        #expect(!filler.isFetchDue(at: at(1.5)))
        #expect(filler.isFetchDue(at: at(2)))
        #expect(filler.watermark == nil)
        #expect(filler.onFetched([], through: 39, at: at(2)).map(\.seq) == [40])
    }

    @Test func eachFiringIDIsDeliveredOnceWhateverItsSeq() {
        var filler = GapFiller(since: 0)
        #expect(filler.onFetched([event(1, "x"), event(2, "y")], through: 2, at: at(0)).map(\.seq) == [1, 2])
        #expect(filler.onLive(event(1, "x"), at: at(0.1)).isEmpty, "a live copy of a replayed event")
        #expect(filler.onLive(event(3, "x"), at: at(0.1)).isEmpty, "a redelivery: new seq, same firing id")
        #expect(filler.onLive(event(4, "z"), at: at(0.1)).isEmpty, "seq 3 is not settled yet")
        #expect(filler.onFetched([event(4, "z")], through: 4, at: at(0.2)).map(\.firing.reminderId) == ["z"])
        #expect(filler.watermark == 4)
    }

    @Test func aSeqHeldByADeadWorkerStallsTheStreamForAtMostTheMaximumWait() {
        var filler = GapFiller(since: 0)
        _ = filler.onFetched([], through: 0, at: at(0))
        #expect(filler.onLive(event(2), at: at(1)).isEmpty, "seq 1 is in flight at a worker that died")
        #expect(filler.onTick(at: at(10)).isEmpty, "no fetch has seen it wait yet")
        #expect(filler.onFetched([], through: 0, at: at(10)).isEmpty)
        #expect(filler.onTick(at: at(11.99)).isEmpty)
        #expect(filler.onTick(at: at(12)).map(\.seq) == [2])
        #expect(filler.onLive(event(1), at: at(12.5)).map(\.seq) == [1], "late, but not lost")
    }

    @Test func aFailedFetchOnlyPacesTheNextOne() {
        var filler = GapFiller(since: 0)
        _ = filler.onFetched([], through: 0, at: at(0))
        #expect(filler.onLive(event(5), at: at(1)).isEmpty)
        filler.onFetchFailed(at: at(1))
        #expect(!filler.isFetchDue(at: at(1.01)))
        #expect(filler.isFetchDue(at: at(1.05)))
        #expect(filler.onFetched([event(3), event(4)], through: 4, at: at(4)).map(\.seq) == [3, 4, 5])
    }

    @Test func forgetsTheOldestFiringIDsBeyondItsBound() {
        var settings = GapFiller.Settings()
        settings.rememberedFiringIDs = 2
        var filler = GapFiller(since: 0, settings: settings)
        _ = filler.onFetched([event(1, "a"), event(2, "b"), event(3, "c")], through: 3, at: at(0))
        #expect(filler.onLive(event(4, "a"), at: at(1)).map(\.seq) == [4], "forgotten, so delivered again")
        #expect(filler.onLive(event(5, "c"), at: at(1)).isEmpty)
    }
}
