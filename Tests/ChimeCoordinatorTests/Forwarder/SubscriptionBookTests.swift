import Foundation
import Testing

@testable import ChimeCoordinator

/// The forwarder's count of subscriptions per connection and peer, and the ban back-off
/// (issue 24, item 1: subscriptions per connection bounded). Pure: no sockets, time passed in.
@Suite struct SubscriptionBookTests {
    typealias Upstream = SubscriptionBook.Upstream

    static func topic(_ text: String) -> Data { Data(text.utf8) }

    @Test func aRepeatedSubscribeCountsOnceAndOnlyTheFirstHolderGoesUpstream() {
        var book = SubscriptionBook(limits: .init(maxPerPeer: 10, maxTotalBytes: 1000))
        let first = book.subscribe(topic: Self.topic("fire."), connection: 7, peer: "address 127.0.0.1")
        #expect(first.upstream == [Upstream(subscribe: true, topic: Self.topic("fire."))])
        #expect(first.verdict == .within)
        let again = book.subscribe(topic: Self.topic("fire."), connection: 7, peer: "address 127.0.0.1")
        #expect(again.upstream == [])
        let other = book.subscribe(topic: Self.topic("fire."), connection: 8, peer: "address 127.0.0.1")
        #expect(other.upstream == [])
        #expect(book.subscriptions == 2)
        #expect(book.bytes == 10)
        #expect(book.topicCount == 1)
        #expect(book.usage["address 127.0.0.1"] == .init(subscriptions: 2, bytes: 10))
    }

    @Test func unsubscribeDecrementsAndTheLastHolderUnsubscribesUpstream() {
        var book = SubscriptionBook(limits: .init(maxPerPeer: 10, maxTotalBytes: 1000))
        _ = book.subscribe(topic: Self.topic("a"), connection: 7, peer: "p")
        _ = book.subscribe(topic: Self.topic("a"), connection: 8, peer: "q")
        #expect(book.unsubscribe(topic: Self.topic("a"), connection: 7) == [])
        #expect(book.unsubscribe(topic: Self.topic("a"), connection: 7) == [])  // not held any more
        #expect(book.unsubscribe(topic: Self.topic("zzz"), connection: 8) == [])  // never held
        #expect(book.subscriptions == 1)
        #expect(book.usage["p"] == nil)
        #expect(book.unsubscribe(topic: Self.topic("a"), connection: 8) == [Upstream(subscribe: false, topic: Self.topic("a"))])
        #expect(book.subscriptions == 0)
        #expect(book.bytes == 0)
        #expect(book.usage.isEmpty)
    }

    @Test func whatArrivesUnderADisconnectedDescriptorIsStaleUntilAnAcceptOnIt() {
        var book = SubscriptionBook(limits: .init(maxPerPeer: 1, maxTotalBytes: 1000))
        _ = book.subscribe(topic: Self.topic("a"), connection: 7, peer: "connection 7 from 127.0.0.1")
        #expect(book.disconnect(descriptor: 7) == [Upstream(subscribe: false, topic: Self.topic("a"))])
        // libzmq hands over messages it queued before the disconnect: no ghost connection, no verdict.
        for name in ["x", "y", "z"] {
            #expect(book.subscribe(topic: Self.topic(name), connection: 7, peer: "connection 7 from 127.0.0.1") == ([], .within))
        }
        #expect(book.subscriptions == 0 && !book.knows(7) && !book.isNew(7))
        book.accepted(descriptor: 7)
        #expect(book.isNew(7) && !book.isNew(SubscriptionBook.inProcess))
        #expect(book.subscribe(topic: Self.topic("x"), connection: 7, peer: "connection 7 from 127.0.0.2").upstream
            == [Upstream(subscribe: true, topic: Self.topic("x"))])
        #expect(book.subscriptions == 1)
    }

    @Test func aDisconnectForgetsTheConnectionsTopics() {
        var book = SubscriptionBook(limits: .init(maxPerPeer: 10, maxTotalBytes: 1000))
        _ = book.subscribe(topic: Self.topic("a"), connection: 7, peer: "p")
        _ = book.subscribe(topic: Self.topic("b"), connection: 7, peer: "p")
        _ = book.subscribe(topic: Self.topic("b"), connection: 9, peer: "p")
        #expect(book.disconnect(descriptor: 7) == [Upstream(subscribe: false, topic: Self.topic("a"))])
        #expect(book.disconnect(descriptor: 7) == [])
        #expect(book.usage["p"] == .init(subscriptions: 1, bytes: 1))
        #expect(book.subscriptions == 1)
    }

    @Test func aReusedDescriptorUnderAnotherPeerDropsTheOldConnectionFirst() {
        var book = SubscriptionBook(limits: .init(maxPerPeer: 10, maxTotalBytes: 1000))
        _ = book.subscribe(topic: Self.topic("a"), connection: 7, peer: "p")
        let reused = book.subscribe(topic: Self.topic("b"), connection: 7, peer: "q")
        #expect(reused.upstream == [Upstream(subscribe: false, topic: Self.topic("a")), Upstream(subscribe: true, topic: Self.topic("b"))])
        #expect(book.usage == ["q": .init(subscriptions: 1, bytes: 1)])
    }

    @Test func aPeerPastItsLimitOverAllItsConnectionsIsReported() {
        var book = SubscriptionBook(limits: .init(maxPerPeer: 3, maxTotalBytes: 1_000_000))
        for index in 0..<3 {
            #expect(book.subscribe(topic: Self.topic("t\(index)"), connection: .init(descriptor: Int32(10 + index), serial: nil), peer: "key A").verdict == .within)
        }
        #expect(book.subscribe(topic: Self.topic("x"), connection: 50, peer: "key B").verdict == .within)
        let over = book.subscribe(topic: Self.topic("t9"), connection: 10, peer: "key A")
        #expect(over.verdict == .peerOverLimit(peer: "key A", subscriptions: 4))
    }

    @Test func theTotalPastItsLimitNamesTheKeyHoldingTheMostBytes() {
        var book = SubscriptionBook(limits: .init(maxPerPeer: 100, maxTotalBytes: 10))
        #expect(book.subscribe(topic: Self.topic("aaaaaa"), connection: 1, peer: "key big").verdict == .within)
        #expect(book.subscribe(topic: Self.topic("bb"), connection: 2, peer: "key small").verdict == .within)
        let over = book.subscribe(topic: Self.topic("ccc"), connection: 2, peer: "key small")
        #expect(over.verdict == .totalOverLimit(peer: "key big", bytes: 11))
    }

    @Test func withoutKeysTheTotalPastItsLimitNamesTheConnectionThatPassedIt() {
        // A subscriber holding more than each of an attacker's many small connections is not
        // the one cut off when the attacker's next subscription passes the total.
        var book = SubscriptionBook(limits: .init(maxPerPeer: 100, maxTotalBytes: 20))
        let legit = "connection #1 from 127.0.0.1"
        #expect(book.subscribe(topic: Self.topic("legit-topic"), connection: .init(descriptor: 7, serial: 1), peer: legit).verdict == .within)
        for serial in UInt64(2)...4 {
            let peer = "connection #\(serial) from 127.0.0.2"
            let verdict = book.subscribe(topic: Self.topic("x\(serial)"), connection: .init(descriptor: Int32(serial) + 7, serial: serial), peer: peer).verdict
            #expect(verdict == .within)
        }
        let attacker = "connection #5 from 127.0.0.2"
        let over = book.subscribe(topic: Self.topic("attack"), connection: .init(descriptor: 12, serial: 5), peer: attacker)
        #expect(over.verdict == .totalOverLimit(peer: attacker, bytes: 23))
    }

    @Test func inProcessSubscribersAreAMultisetAndNeverBanned() {
        var book = SubscriptionBook(limits: .init(maxPerPeer: 1, maxTotalBytes: 3))
        let inproc = SubscriptionBook.inProcess
        let peer = SubscriptionBook.inProcessPeer
        #expect(book.subscribe(topic: Self.topic("a"), connection: inproc, peer: peer).verdict == .within)
        #expect(book.subscribe(topic: Self.topic("a"), connection: inproc, peer: peer).upstream == [])
        #expect(book.subscribe(topic: Self.topic("bcd"), connection: inproc, peer: peer).verdict
            == .totalOverLimit(peer: nil, bytes: 5))
        #expect(book.unsubscribe(topic: Self.topic("a"), connection: inproc) == [])
        #expect(book.unsubscribe(topic: Self.topic("a"), connection: inproc) == [Upstream(subscribe: false, topic: Self.topic("a"))])
        #expect(book.subscriptions == 1)
    }

    @Test func droppingAPeerTakesOutOnlyItsConnectionsAndIgnoresThemUntilTheirDisconnect() {
        var book = SubscriptionBook(limits: .init(maxPerPeer: 10, maxTotalBytes: 1000))
        let socket = ConnectionSocket.Identity(device: 9, inode: 4242)
        _ = book.subscribe(topic: Self.topic("b"), connection: 5, peer: "key A", socket: socket)
        _ = book.subscribe(topic: Self.topic("a"), connection: 2, peer: "key B")
        _ = book.subscribe(topic: Self.topic("a"), connection: 5, peer: "key A")
        _ = book.subscribe(topic: Self.topic("c"), connection: 3, peer: "key A")
        let (dropped, upstream) = book.drop(peer: "key A")
        #expect(dropped.map(\.id) == [3, 5])
        #expect(dropped.map(\.socket) == [nil, socket])  // the identity given when connection 5 was new
        // "a" is still held by key B's connection: only "b" and "c" go upstream.
        #expect(upstream.sorted { $0.topic.lexicographicallyPrecedes($1.topic) }
            == [Upstream(subscribe: false, topic: Self.topic("b")), Upstream(subscribe: false, topic: Self.topic("c"))])
        #expect(book.usage == ["key B": .init(subscriptions: 1, bytes: 1)])
        #expect(book.subscriptions == 1)
        // What a dropped connection still sends changes nothing, before its disconnect and after ...
        let late = book.subscribe(topic: Self.topic("d"), connection: 5, peer: "key A")
        #expect(late.upstream == [] && late.verdict == .within)
        #expect(book.subscriptions == 1 && !book.knows(5))
        #expect(book.disconnect(descriptor: 5) == [])
        #expect(book.subscribe(topic: Self.topic("d"), connection: 5, peer: "key A").upstream == [])
        // ... until a connection is accepted on the descriptor again.
        book.accepted(descriptor: 5)
        #expect(book.subscribe(topic: Self.topic("d"), connection: 5, peer: "key C").upstream == [Upstream(subscribe: true, topic: Self.topic("d"))])
        #expect(book.knows(5))
        // In-process subscribers are never dropped.
        _ = book.subscribe(topic: Self.topic("e"), connection: SubscriptionBook.inProcess, peer: SubscriptionBook.inProcessPeer)
        #expect(book.drop(peer: SubscriptionBook.inProcessPeer).connections.isEmpty)
        #expect(book.drop(peer: "key nobody").connections.isEmpty)
    }

    @Test func bansDoubleUpToTheMaximumAndAreForgottenAfterAQuietHour() {
        var bans = BanBook()
        let t0 = ContinuousClock.now
        #expect(bans.ban("key A", at: t0) == .seconds(60))
        #expect(bans.isBanned("key A", at: t0 + .seconds(59)))
        #expect(!bans.isBanned("key A", at: t0 + .seconds(60)))
        #expect(!bans.isBanned("key B", at: t0))
        #expect(bans.ban("key A", at: t0 + .seconds(61)) == .seconds(120))
        var now = t0 + .seconds(200)
        var lengths: [Int64] = []
        for _ in 0..<6 {
            lengths.append(bans.ban("key A", at: now).components.seconds)
            now = now + .seconds(1)
        }
        #expect(lengths == [240, 480, 960, 1920, 3600, 3600])
        // An hour after the last ban ended, the next one starts over at 60 s.
        let quiet = now + .seconds(3600 + 3601)
        #expect(bans.ban("key A", at: quiet) == .seconds(60))
        #expect(bans.banCount == 9)
    }

    @Test func theBanBookForgetsTheBanEndingFirstWhenFull() {
        var bans = BanBook(policy: .init(maxEntries: 2))
        let t0 = ContinuousClock.now
        _ = bans.ban("a", at: t0)
        _ = bans.ban("b", at: t0 + .seconds(1))
        _ = bans.ban("c", at: t0 + .seconds(2))
        #expect(bans.rememberedCount == 2)
        #expect(!bans.isBanned("a", at: t0 + .seconds(3)))
        #expect(bans.isBanned("b", at: t0 + .seconds(3)))
        #expect(bans.isBanned("c", at: t0 + .seconds(3)))
    }

    @Test func peerNamesAreTheKeyElseTheConnectionNeverTheAddress() {
        func name(_ userID: String?, _ address: String?, _ descriptor: Int32) -> String {
            let tag = SubscriberPeer.Tag(userID: userID)
            return SubscriberPeer.name(tag: tag, address: address, connection: .init(descriptor: descriptor, serial: tag.serial))
        }
        #expect(name("subscriber ABC #17", "127.0.0.1", 7) == "key ABC")
        #expect(name("subscriber ABC", "127.0.0.1", 7) == "key ABC")
        #expect(name("#17", "127.0.0.1", 7) == "connection #17 from 127.0.0.1")
        #expect(name(nil, "127.0.0.1", 7) == "connection 7 from 127.0.0.1")
        // Two local subscribers without keys are two peers, though they share 127.0.0.1.
        #expect(name("#18", "127.0.0.1", 7) == "connection #18 from 127.0.0.1")
        #expect(name(" ", nil, 9) == "connection 9")
        #expect(SubscriberPeer.isKey("key ABC"))
        #expect(!SubscriberPeer.isKey("connection #17 from 127.0.0.1"))
        // Tags parse totally.
        #expect(SubscriberPeer.Tag(userID: "subscriber K #12") == .init(key: "K", serial: 12))
        #expect(SubscriberPeer.Tag(userID: "#x") == .init(key: nil, serial: nil))
        #expect(SubscriberPeer.Tag(userID: "#99999999999999999999999") == .init(key: nil, serial: nil))
        #expect(SubscriberPeer.Tag(userID: "a b c #-1") == .init(key: "#-1", serial: nil))
        #expect(SubscriberPeer.Tag(userID: "") == .init(key: nil, serial: nil))
    }

    @Test func aConnectionWhoseDisconnectIsReadBeforeItsSubscriptionsLeavesNoRecord() {
        var book = SubscriptionBook(limits: .init(maxPerPeer: 10, maxTotalBytes: 1000))
        // Serial 7 was handshaken on descriptor 9 and ended before anything of it was read.
        #expect(book.disconnect(descriptor: 9) == [])
        book.endSerials(on: 9, through: 8)
        #expect(!book.isNew(.init(descriptor: 9, serial: 7)))
        #expect(book.subscribe(topic: Self.topic("a"), connection: .init(descriptor: 9, serial: 7), peer: "connection #7") == ([], .within))
        #expect(book.subscriptions == 0 && book.usage.isEmpty)
        // A later connection on the descriptor has a higher serial: it counts.
        book.accepted(descriptor: 9)
        #expect(book.isNew(.init(descriptor: 9, serial: 9)))
        #expect(book.subscribe(topic: Self.topic("b"), connection: .init(descriptor: 9, serial: 9), peer: "connection #9").upstream
            == [Upstream(subscribe: true, topic: Self.topic("b"))])
        // A lower watermark later never lowers it, and a live record is never made stale by it.
        book.endSerials(on: 9, through: 3)
        book.endSerials(on: 9, through: 9)
        #expect(book.knows(.init(descriptor: 9, serial: 9)))
        #expect(book.subscribe(topic: Self.topic("c"), connection: .init(descriptor: 9, serial: 9), peer: "connection #9").verdict == .within)
        #expect(book.subscriptions == 2)
    }

    @Test func serialsTellApartConnectionsThatShareADescriptorOverTime() {
        var book = SubscriptionBook(limits: .init(maxPerPeer: 2, maxTotalBytes: 1000))
        let old = SubscriptionBook.ConnectionID(descriptor: 9, serial: 40)
        let new = SubscriptionBook.ConnectionID(descriptor: 9, serial: 41)
        _ = book.subscribe(topic: Self.topic("a"), connection: old, peer: "connection #40 from 127.0.0.1")
        #expect(book.drop(peer: "connection #40 from 127.0.0.1").connections.map(\.id) == [old])
        // The new connection on descriptor 9 is accepted while the old one's messages still come:
        // they stay the old one's (ignored) and never count against the new one.
        book.accepted(descriptor: 9)
        for name in ["x", "y", "z"] {
            #expect(book.subscribe(topic: Self.topic(name), connection: old, peer: "connection #40 from 127.0.0.1") == ([], .within))
        }
        #expect(book.subscribe(topic: Self.topic("b"), connection: new, peer: "connection #41 from 127.0.0.1").verdict == .within)
        #expect(book.usage == ["connection #41 from 127.0.0.1": .init(subscriptions: 1, bytes: 1)])
        // The descriptor's disconnect ends every connection on it.
        #expect(book.disconnect(descriptor: 9) == [Upstream(subscribe: false, topic: Self.topic("b"))])
        #expect(book.subscribe(topic: Self.topic("c"), connection: new, peer: "connection #41 from 127.0.0.1") == ([], .within))
        #expect(book.subscriptions == 0)
    }

    @Test func subscriptionMessagesDecodeAndGarbageIsRefused() {
        let sub = SubscriptionMessage(frames: [Data([1]) + Self.topic("fire.")], userID: "subscriber K #3", address: "10.0.0.1", fileDescriptor: "12")
        #expect(sub == SubscriptionMessage.Expected(subscribe: true, topic: Self.topic("fire."), connection: .init(descriptor: 12, serial: 3), peer: "key K").value)
        let unsub = SubscriptionMessage(frames: [Data([0])], userID: nil, address: "10.0.0.1", fileDescriptor: "3")
        #expect(unsub?.subscribe == false)
        #expect(unsub?.topic == Data())
        #expect(unsub?.peer == "connection 3 from 10.0.0.1")
        // libzmq's unsubscriptions for an ended connection carry no metadata.
        let orphan = SubscriptionMessage(frames: [Data([0, 0x41])], userID: nil, address: nil, fileDescriptor: nil)
        #expect(orphan?.connection == SubscriptionBook.inProcess)
        #expect(orphan?.peer == SubscriptionBook.inProcessPeer)
        // Garbage: no frame, an empty frame, another flag, several frames, bad descriptors.
        #expect(SubscriptionMessage(frames: [], userID: nil, address: nil, fileDescriptor: nil) == nil)
        #expect(SubscriptionMessage(frames: [Data()], userID: nil, address: nil, fileDescriptor: "1") == nil)
        #expect(SubscriptionMessage(frames: [Data([2, 0x41])], userID: nil, address: nil, fileDescriptor: "1") == nil)
        #expect(SubscriptionMessage(frames: [Data([1]), Data([1])], userID: nil, address: nil, fileDescriptor: "1") == nil)
        for descriptor in ["", "-5", "x", "99999999999", "1e3"] {
            #expect(SubscriptionMessage(frames: [Data([1, 0x41])], userID: "a b", address: "h", fileDescriptor: descriptor)?.connection
                == SubscriptionBook.inProcess)
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let count = Int.random(in: 0...3, using: &generator)
            let frames = (0..<count).map { _ in Data((0..<Int.random(in: 0...8, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }) }
            let text = String(decoding: (0..<Int.random(in: 0...6, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }, as: UTF8.self)
            if let message = SubscriptionMessage(frames: frames, userID: text, address: text, fileDescriptor: text) {
                #expect(frames.count == 1)
                #expect(message.topic.count == frames[0].count - 1)
            }
        }
    }
}

extension SubscriptionBook.ConnectionID: ExpressibleByIntegerLiteral {
    /// A bare descriptor (no ZAP serial), as the tests write it.
    public init(integerLiteral descriptor: Int32) {
        self.init(descriptor: descriptor, serial: nil)
    }
}

extension SubscriptionMessage {
    /// A value built field by field, to compare a decoded message with.
    struct Expected {
        var subscribe: Bool
        var topic: Data
        var connection: SubscriptionBook.ConnectionID
        var peer: String
        var value: SubscriptionMessage? {
            var message = SubscriptionMessage(frames: [Data([1])], userID: nil, address: nil, fileDescriptor: nil)
            message?.subscribe = subscribe
            message?.topic = topic
            message?.connection = connection
            message?.peer = peer
            return message
        }
    }
}
