import ChimeClient
import ChimeCore
import ChimeRuntime
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing
import ZeroMQ

/// The subscribers the slot move process tests run throughout, and what they must have seen.
extension SlotMoveProcessTests {
    /// A gap-free subscriber of every shard (`ClusterSubscriber`, catch-up from seq 0) for the
    /// whole run: what it delivered, in order.
    final class Subscription: @unchecked Sendable {
        enum Item {
            case fire(FireEvent)
            case handOver(HandOverEvent)
        }
        private let lock = NSLock()
        private var items: [Item] = []
        private let stop = StopSignal()
        private let done = DispatchSemaphore(value: 0)

        func run(map: ShardMap, following: ClusterSubscriber.MapFollowing? = nil) throws {
            let context = try Context()
            stop.onStop { context.shutdown() }
            let subscriber = ClusterSubscriber(map: map, recipient: nil, stop: stop)
            let catchUp = ClusterSubscriber.CatchUp(
                timeout: .seconds(1), retries: 0, context: context, since: Dictionary(uniqueKeysWithValues: map.shards.map { ($0.id, 0) }))
            Thread.detachNewThread { [self] in
                defer { done.signal() }
                do {
                    try subscriber.run(
                        catchUp: catchUp, following: following, onEvent: { [self] event, _ in lock.withLock { items.append(.fire(event)) } },
                        onHandOver: { [self] event, _ in lock.withLock { items.append(.handOver(event)) } })
                } catch {
                    print("subscription: \(error)")
                }
            }
        }

        var delivered: [Item] { lock.withLock { items } }
        var handOvers: [HandOverEvent] { delivered.compactMap { if case .handOver(let event) = $0 { event } else { nil } } }
        var firingIDs: Set<FiringID> { Set(delivered.compactMap { if case .fire(let event) = $0 { event.firing.firingId } else { nil } }) }

        func close() {
            stop.requestStop()
            done.wait()
        }

        /// What a `chime subscribe --json` log holds, in order: its fire and hand-over lines.
        static func items(ofLog log: String) -> [Item] {
            let codec = WireCodec()
            return log.split(separator: "\n").compactMap { line -> Item? in
                guard line.hasPrefix("{") else { return nil }
                let bytes = Data(line.utf8)
                if line.contains(#""type":"handover""#) { return (try? codec.decode(HandOverEvent.self, from: bytes)).map(Item.handOver) }
                return (try? codec.decode(FireEvent.self, from: bytes)).map(Item.fire)
            }
        }

        /// The load's fire events of `slots` in `items` that came from another shard than the
        /// slot's stream at that point (its owner in `map`, then each hand-over's target).
        static func outOfOrder(_ items: [Item], map: ShardMap, slots: ClosedRange<Int>) -> [String] {
            var streams: [Int: Int] = [:]
            var found: [String] = []
            for item in items {
                switch item {
                case .handOver(let event):
                    for range in event.slots { for slot in range.first...range.last { streams[slot] = event.target } }
                case .fire(let event):
                    let slot = map.slot(of: event.firing.recipient)
                    guard event.firing.reminderId.rawValue.hasPrefix("m-"), slots.contains(slot) else { continue }
                    let stream = streams[slot] ?? map.ownerID(ofSlot: slot)
                    if stream != (event.shard ?? 0) { found.append("\(event.firing.firingId) from \(event.shard ?? 0), slot \(slot) is \(stream ?? -1)'s") }
                }
            }
            return found
        }
    }

    /// Starts a `ClusterSubscriber` (from seq 0 on every shard of `map`) and `chime subscribe
    /// --json --since 0` (child "subscribe", the register's map).
    static func startSubscribers(
        _ cluster: LocalCluster, map: ShardMap, following: ClusterSubscriber.MapFollowing? = nil, recipient: RecipientID? = nil
    ) throws -> Subscription {
        let subscription = Subscription()
        try subscription.run(map: map, following: following)
        try cluster.spawn("subscribe", ["subscribe", "--json", "--since", "0"] + cluster.shardedArguments)
        if let recipient {
            try cluster.spawn(
                "subscribe-one", ["subscribe", "--json", "--since", "0", "--recipient", recipient.rawValue] + cluster.shardedArguments)
        }
        return subscription
    }

    /// Checks that `chime subscribe --recipient` (started by ``startSubscribers``) printed each
    /// due firing of `recipient`'s acknowledged reminders exactly once, though its slot moved to
    /// shard 2 and back: the source's catch-up answers `wrong_shard` after each move, and the
    /// subscriber follows the map to the slot's new owner instead of ending.
    /// - Returns: how many firings it printed.
    static func expectRecipientSubscriberFollowedItsSlot(
        _ cluster: LocalCluster, recipient: RecipientID, acknowledged: [Reminder]
    ) throws -> Int {
        let expected = Set(acknowledged.filter { $0.recipient == recipient }.flatMap { Durability.dueFiringIDs(of: $0, through: .distantFuture) })
        #expect(!expected.isEmpty)
        var printed: [FiringID] = []
        try expectEventually(timeout: 20, interval: 0.2, "chime subscribe --recipient \(recipient.rawValue) to print its firings") {
            printed = Subscription.items(ofLog: cluster.log(of: "subscribe-one")).compactMap {
                if case .fire(let event) = $0 { event.firing.firingId } else { nil }
            }
            return expected.isSubset(of: Set(printed))
        }
        #expect(printed.count == Set(printed).count, "printed twice: \(printed.count - Set(printed).count)")
        #expect(Set(printed).isSubset(of: expected), "\(Set(printed).subtracting(expected).prefix(5))")
        #expect(!cluster.log(of: "subscribe-one").contains("wrong_shard"))
        return printed.count
    }

    /// Checks what both subscribers delivered after `rounds` rounds of 2 → 3 → 2: every due
    /// firing of `acknowledged`, each committed move's hand-over once from its source at the
    /// map epochs the moves made (2 … 1 + 8 × rounds, one later each when shard 2 `joined` the
    /// register's map first), and, when `isOrderChecked`, each moved
    /// slot's events from the source before its hand-over and from the target after it.
    /// - Returns: the hand-overs and the events out of slot order (ClusterSubscriber, chime subscribe).
    static func expectSubscribersSawTheMoves(
        _ subscription: Subscription, _ cluster: LocalCluster, map: ShardMap, acknowledged: [Reminder], rounds: Int, isOrderChecked: Bool,
        joined: Bool = false
    ) throws -> (handOvers: Int, outOfOrder: Int, printedOutOfOrder: Int) {
        let expected = Set(acknowledged.flatMap { Durability.dueFiringIDs(of: $0, through: .distantFuture) })
        func handOvers(_ items: [Subscription.Item]) -> [HandOverEvent] {
            items.compactMap { if case .handOver(let event) = $0 { event } else { nil } }
        }
        func firingIDs(_ items: [Subscription.Item]) -> Set<FiringID> {
            Set(items.compactMap { if case .fire(let event) = $0 { event.firing.firingId } else { nil } })
        }
        var printed: [Subscription.Item] = []
        try expectEventually(timeout: 20, interval: 0.2, "the subscribers' firings and hand-overs") {
            printed = Subscription.items(ofLog: cluster.log(of: "subscribe"))
            return expected.isSubset(of: subscription.firingIDs) && subscription.handOvers.count >= 8 * rounds
                && expected.isSubset(of: firingIDs(printed)) && handOvers(printed).count >= 8 * rounds
        }
        let delivered = subscription.delivered
        for (name, items) in [("ClusterSubscriber", delivered), ("chime subscribe", printed)] {
            let received = handOvers(items)
            let first: UInt64 = joined ? 3 : 2
            #expect(received.map(\.mapEpoch).sorted() == Array(first...(first - 1 + UInt64(8 * rounds))), "\(name): \(received)")
            #expect(Set(received.map(\.move)).count == received.count, "\(name)")
            for event in received {
                let toShard2 = event.target == 2
                #expect(event.shard == (toShard2 ? 0 : 2) && event.slots.allSatisfy { $0.first >= 0 && $0.last <= 1023 }, "\(name): \(event)")
            }
        }
        let outOfOrder = Subscription.outOfOrder(delivered, map: map, slots: 0...1023)
        let printedOutOfOrder = Subscription.outOfOrder(printed, map: map, slots: 0...1023)
        if isOrderChecked {
            #expect(outOfOrder.isEmpty, "\(outOfOrder.prefix(5))")
            #expect(printedOutOfOrder.isEmpty, "chime subscribe: \(printedOutOfOrder.prefix(5))")
        }
        return (handOvers(delivered).count, outOfOrder.count, printedOutOfOrder.count)
    }
}
