import ChimeRuntime
import ChimeTestSupport
import Testing
@testable import ChimeCoordinator


@Suite struct TokenBucketTests {
    @Test func takesTheBurstThenRefusesWithTheWaitForOneToken() {
        let clock = ManualClock("2026-12-24T08:00:00Z")
        var bucket = TokenBucket(rate: 2, burst: 5, at: clock.monotonic)
        let answers = (0..<8).map { _ in bucket.take(at: clock.monotonic) }
        #expect(answers == [nil, nil, nil, nil, nil, 500, 500, 500])
    }

    @Test func refillsAtTheRateAndNeverBeyondTheBurst() {
        let clock = ManualClock("2026-12-24T08:00:00Z")
        var bucket = TokenBucket(rate: 10, burst: 3, at: clock.monotonic)
        for _ in 0..<3 { #expect(bucket.take(at: clock.monotonic) == nil) }
        #expect(bucket.take(at: clock.monotonic) == 100)
        clock.advance(by: 0.04)
        #expect(bucket.take(at: clock.monotonic) == 60)
        clock.advance(by: 0.06)
        #expect(bucket.take(at: clock.monotonic) == nil)
        #expect(bucket.take(at: clock.monotonic) == 100)
        clock.advance(by: 3600)
        var taken = 0
        while bucket.take(at: clock.monotonic) == nil { taken += 1 }
        #expect(taken == 3)
    }

    @Test func countsExactlyOverManySteps() {
        let clock = ManualClock("2026-12-24T08:00:00Z")
        var bucket = TokenBucket(rate: 10, burst: 1, at: clock.monotonic)
        var admitted = 0
        // 1,000 steps of 0.1 s: one token each, whatever the rounding of 0.1.
        for _ in 0..<1000 {
            clock.advance(by: 0.1)
            if bucket.take(at: clock.monotonic) == nil { admitted += 1 }
            if bucket.take(at: clock.monotonic) == nil { admitted += 1 }
        }
        #expect(admitted == 1000)
    }

    @Test func isFullAgainAfterBurstOverRate() {
        var bucket = TokenBucket(rate: 4, burst: 8, at: 0)
        #expect(bucket.take(at: 0) == nil)
        #expect(!bucket.isFull(at: 0.2))
        #expect(bucket.isFull(at: 0.25))
        #expect(bucket.secondsToFill == 2)
    }
}

@Suite struct ControlRateLimiterTests {
    static func limit(rate: Double = 2, burst: Int = 3, loopback: Bool = false, maxPeers: Int = 4096)
        -> ChimeConfiguration.RateLimit
    {
        var limit = ChimeConfiguration.RateLimit()
        limit.requestsPerSecond = rate
        limit.burst = burst
        limit.applyToLoopback = loopback
        limit.maxPeers = maxPeers
        return limit
    }

    @Test func loopbackAndLocalPeersAreNotLimitedByDefault() {
        var limiter = ControlRateLimiter(limit: Self.limit())
        for address in ["127.0.0.1", "127.3.4.5", "::1", "::ffff:127.0.0.1", ":1000:1000:4242", "", nil] as [String?] {
            for _ in 0..<100 { #expect(limiter.admit(peerAddress: address, routingID: [0, 1], at: 0) == nil) }
        }
        #expect(limiter.buckets.isEmpty)
    }

    @Test func eachRemoteAddressHasItsOwnBucketWhateverItsRoutingIDs() {
        var limiter = ControlRateLimiter(limit: Self.limit())
        let first = (0..<5).map { limiter.admit(peerAddress: "10.0.0.1", routingID: [UInt8($0)], at: 0) }
        let second = (0..<5).map { _ in limiter.admit(peerAddress: "2001:db8::7", routingID: [9], at: 0) }
        #expect(first == [nil, nil, nil, 500, 500])
        #expect(second == [nil, nil, nil, 500, 500])
        #expect(limiter.buckets.keys.sorted() == ["10.0.0.1", "2001:db8::7"])
    }

    @Test func applyToLoopbackLimitsLocalPeersAndKeysAnAddresslessPeerByRoutingID() {
        var limiter = ControlRateLimiter(limit: Self.limit(burst: 1, loopback: true))
        #expect(limiter.admit(peerAddress: "127.0.0.1", routingID: [1], at: 0) == nil)
        #expect(limiter.admit(peerAddress: "127.0.0.1", routingID: [2], at: 0) == 500)
        #expect(limiter.admit(peerAddress: nil, routingID: [0, 0xab], at: 0) == nil)
        #expect(limiter.admit(peerAddress: nil, routingID: [0, 0xab], at: 0) == 500)
        #expect(limiter.admit(peerAddress: nil, routingID: [0, 0xac], at: 0) == nil)
        #expect(limiter.buckets.count == 3)
    }

    @Test func aFullTableEvictsTheLeastRecentlyUsedPeer() {
        var limiter = ControlRateLimiter(limit: Self.limit(burst: 2, maxPeers: 2))
        #expect(limiter.admit(peerAddress: "10.0.0.1", routingID: [], at: 0) == nil)
        #expect(limiter.admit(peerAddress: "10.0.0.2", routingID: [], at: 0) == nil)
        #expect(limiter.admit(peerAddress: "10.0.0.1", routingID: [], at: 0.05) == nil)
        // A newcomer gets a bucket of its own (no starving behind a shared one); 10.0.0.2,
        // seen least recently, makes room.
        #expect(limiter.admit(peerAddress: "10.0.0.3", routingID: [], at: 0.1) == nil)
        #expect(limiter.admit(peerAddress: "10.0.0.3", routingID: [], at: 0.1) == nil)
        #expect(limiter.admit(peerAddress: "10.0.0.3", routingID: [], at: 0.1) == 500)
        #expect(limiter.buckets.keys.sorted() == ["10.0.0.1", "10.0.0.3"])
        #expect(limiter.evictions == 1)
        // Many more addresses than the table holds: each newcomer is still served.
        for index in 0..<10_000 {
            #expect(limiter.admit(peerAddress: "10.1.\(index / 256).\(index % 256)", routingID: [], at: 0.2) == nil)
        }
        #expect(limiter.buckets.count == 2)
    }

    @Test func idleEntriesArePrunedOnceTheirBucketsAreFull() {
        var limiter = ControlRateLimiter(limit: Self.limit(rate: 2, burst: 4, maxPeers: 101))
        for index in 0..<100 { _ = limiter.admit(peerAddress: "10.0.1.\(index)", routingID: [], at: 0) }
        #expect(limiter.buckets.count == 100)
        // One token taken: full again after 0.5 s. The sweep runs at most once a second.
        _ = limiter.admit(peerAddress: "10.0.2.1", routingID: [], at: 0.9)
        #expect(limiter.buckets.count == 101)
        _ = limiter.admit(peerAddress: "10.0.2.2", routingID: [], at: 1.2)
        #expect(limiter.buckets.keys.sorted() == ["10.0.2.1", "10.0.2.2"])
    }

    @Test func zeroRateTurnsTheLimitOff() {
        var limiter = ControlRateLimiter(limit: Self.limit(rate: 0, loopback: true))
        for _ in 0..<1000 { #expect(limiter.admit(peerAddress: "10.0.0.1", routingID: [], at: 0) == nil) }
        #expect(limiter.buckets.isEmpty)
    }
}
