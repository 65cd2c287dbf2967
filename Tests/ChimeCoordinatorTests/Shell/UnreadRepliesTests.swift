import Foundation
import Testing
@testable import ChimeCoordinator

/// Issue 37, item 1: connections that do not read their replies are not served. Pure.
@Suite struct UnreadRepliesTests {
    let flooder = [Data([1]), Data()]
    let other = [Data([2]), Data()]

    @Test func servesEveryConnectionUntilOneOfItsRepliesIsRefused() {
        var unread = UnreadReplies()
        #expect(unread.admission(of: flooder, at: 100) == .serve)
        unread.onReplySent(to: flooder)
        #expect(unread.admission(of: flooder, at: 100) == .serve && unread.count == 0 && unread.repliesDropped == 0)
        unread.onReplyRefused(to: flooder, at: 10)
        unread.onReplyRefused(to: flooder, at: 10.5)
        #expect(unread.admission(of: flooder, at: 100) == .refuse)
        #expect(unread.admission(of: other, at: 100) == .serve)
        #expect(unread.count == 1 && unread.repliesDropped == 2 && unread.requestsDropped == 0)
    }

    @Test func dropsAStalledConnectionsRequestsUntilItsRefusalIsTaken() {
        var unread = UnreadReplies()
        unread.onReplyRefused(to: flooder, at: 10)
        unread.onRequestDropped(from: flooder, at: 11)
        unread.onRequestDropped(from: flooder, at: 12)
        #expect(unread.admission(of: flooder, at: 100) == .refuse && unread.requestsDropped == 2)
        // It read: the refusal of its next request was queued, and it is served again.
        unread.onRefusalSent(to: flooder)
        #expect(unread.admission(of: flooder, at: 100) == .serve)
        #expect(unread.count == 0 && unread.requestsDropped == 3 && unread.repliesDropped == 1)
    }

    @Test func triesARefusalOnceEveryProbeIntervalAndDropsTheRestUnread() {
        var unread = UnreadReplies(probeIntervalSeconds: 0.25)
        unread.onReplyRefused(to: flooder, at: 10)
        #expect(unread.admission(of: flooder, at: 10.125) == .drop)
        unread.onRequestDropped(from: flooder, at: nil)
        #expect(unread.admission(of: flooder, at: 10.25) == .refuse)
        // The refusal was refused too: the next try waits another interval.
        unread.onRequestDropped(from: flooder, at: 10.25)
        #expect(unread.admission(of: flooder, at: 10.375) == .drop)
        #expect(unread.admission(of: flooder, at: 10.5) == .refuse)
        #expect(unread.requestsDropped == 2 && unread.repliesDropped == 1)
    }

    @Test func resumesAConnectionThatTakesAReplyOrIsGone() {
        var unread = UnreadReplies()
        unread.onReplyRefused(to: flooder, at: 10)
        unread.onReplyRefused(to: other, at: 10)
        unread.onReplySent(to: flooder)
        unread.onDisconnected(other)
        #expect(unread.count == 0)
        #expect(unread.admission(of: flooder, at: 100) == .serve && unread.admission(of: other, at: 100) == .serve)
    }

    @Test func forgetsConnectionsIdleForAMinute() {
        var unread = UnreadReplies(forgetAfterSeconds: 60)
        unread.onReplyRefused(to: flooder, at: 10)
        unread.onReplyRefused(to: other, at: 30)
        unread.forgetIdle(at: 69.9)
        #expect(unread.count == 2)
        unread.forgetIdle(at: 70)
        #expect(unread.admission(of: flooder, at: 100) == .serve && unread.admission(of: other, at: 100) == .refuse)
        // A dropped request keeps it: it is still there, still not reading.
        unread.onRequestDropped(from: other, at: 80)
        unread.forgetIdle(at: 100)
        #expect(unread.count == 1)
    }

    @Test func tracksAtMostItsBoundForgettingTheOldest() {
        var unread = UnreadReplies(maxTracked: 2)
        let third = [Data([3]), Data()]
        unread.onReplyRefused(to: flooder, at: 1)
        unread.onReplyRefused(to: other, at: 2)
        unread.onReplyRefused(to: flooder, at: 3)
        unread.onReplyRefused(to: third, at: 4)
        #expect(unread.count == 2)
        #expect(unread.admission(of: other, at: 100) == .serve)
        #expect(unread.admission(of: flooder, at: 100) == .refuse && unread.admission(of: third, at: 100) == .refuse)
        #expect(unread.repliesDropped == 4)
    }
}
