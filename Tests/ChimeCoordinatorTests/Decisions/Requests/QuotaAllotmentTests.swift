import ChimeCore
import ChimeJournal
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator
@testable import ChimeSecurity

/// A tenant's quota bounds its total across the shards (issue 37 item 3): each shard holds at
/// most its allotment, the allotments add up to the quota exactly, a key of listed recipients
/// has its quota where they live, and two shards together accept the quota, not twice it. Pure.
@Suite struct QuotaAllotmentTests {
    static let t0 = OwnershipTests.t0
    static let twoShards = ShardMap.evenlySplit(shards: 2) { id in
        ShardMap.Endpoints(
            control: "tcp://127.0.0.1:\(7800 + 10 * id)", dispatch: "tcp://127.0.0.1:\(7801 + 10 * id)",
            results: "tcp://127.0.0.1:\(7802 + 10 * id)", events: "tcp://127.0.0.1:\(7803 + 10 * id)",
            eventsIngest: "tcp://127.0.0.1:\(7804 + 10 * id)")
    }

    @Test func sharesAddUpToTheLimitExactly() {
        var random = SeededRandomNumberGenerator(seed: 37)
        for _ in 0..<2_000 {
            let shards = Int.random(in: 1...9, using: &random)
            var weights: [Int: Int] = [:]
            for id in 0..<shards { weights[id] = Int.random(in: 0...5_000, using: &random) }
            let limit = [0, 1, 7, 10, 1_000_003, Int.max].randomElement(using: &random)!
            let shares = (0..<shards).map { QuotaAllotment.share(of: limit, weights: weights, for: $0) }
            let total = weights.values.reduce(0, +)
            #expect(shares.reduce(0, { $0.addingReportingOverflow($1).partialValue }) == (total == 0 ? 0 : limit), "\(weights) \(limit)")
            #expect(shares.allSatisfy { $0 >= 0 })
            for id in 0..<shards where weights[id] == 0 { #expect(shares[id] == 0) }
        }
        #expect(QuotaAllotment.share(of: 11, weights: [0: 2048, 1: 2048], for: 0) == 5)
        #expect(QuotaAllotment.share(of: 11, weights: [0: 2048, 1: 2048], for: 1) == 6)
    }

    func ownership(_ shard: Int) -> ShardOwnership { ShardOwnership(map: Self.twoShards, shardID: shard) }

    /// The first `prefix<n>` whose slot shard `shard` owns.
    static func recipient(_ prefix: String, on shard: Int) -> RecipientID {
        for n in 0... {
            let recipient = RecipientID("\(prefix)\(n)")
            if twoShards.shard(of: recipient)?.id == shard { return recipient }
        }
        preconditionFailure("unreachable")
    }

    @Test func aPrefixScopeSplitsBySlotsAndAListedOneByItsRecipients() {
        let prefix = RecipientScope(prefixes: ["q-"])
        #expect(QuotaAllotment.allotment(of: 10, for: prefix, under: ownership(0)) == 5)
        #expect(QuotaAllotment.allotment(of: 10, for: prefix, under: ownership(1)) == 5)
        let alice = Self.recipient("alice-", on: 1)
        let one = RecipientScope(recipients: [alice.rawValue])
        #expect(QuotaAllotment.allotment(of: 10, for: one, under: ownership(0)) == 0)
        #expect(QuotaAllotment.allotment(of: 10, for: one, under: ownership(1)) == 10, "one recipient: its whole quota on its shard")
        let three = RecipientScope(recipients: [alice.rawValue, Self.recipient("bob-", on: 0).rawValue, Self.recipient("carol-", on: 1).rawValue])
        #expect(QuotaAllotment.allotment(of: 9, for: three, under: ownership(0)) == 3)
        #expect(QuotaAllotment.allotment(of: 9, for: three, under: ownership(1)) == 6)
        // One shard: the whole limit.
        #expect(QuotaAllotment.allotment(of: 10, for: prefix, under: ShardOwnership(map: nil, shardID: 0)) == 10)
    }

    @Test func twoShardsTogetherAcceptTheQuotaNotTwiceIt() {
        let scope = RecipientScope(prefixes: ["q-"])
        let tenant = ClientAddress(routing: [Data([1])], tenant: "q", scope: scope, quota: TenantQuota(maxReminders: .atMost(10)))
        var accepted = 0
        var messages: [String] = []
        for shard in 0..<2 {
            var state = OwnershipTests.state(shard: shard, map: Self.twoShards)
            state.finishRecovery(at: Self.t0)
            let recipient = Self.recipient("q-", on: shard)
            for n in 0..<10 {
                let directives = state.onRequest(
                    ControlRequest(command: .schedule([OwnershipTests.reminder(ReminderID("r\(n)"), of: recipient)])), from: tenant, at: Self.t0)
                guard case .reply(let outcome, _, _)? = directives.last else { continue }
                if case .failed(let error) = outcome {
                    #expect(error.code == .quotaExceeded)
                    messages.append(error.message)
                } else {
                    accepted += 1
                }
            }
        }
        #expect(accepted == 10, "5 on each shard; before, 10 + 10")
        #expect(messages.count == 10)
        #expect(messages.first?.contains("on shard 0; 6 would pass this shard's allotment of 5 of the quota of 10") == true, "\(messages.first ?? "")")
        // An operator is not held to any allotment.
        var state = OwnershipTests.state(shard: 0, map: Self.twoShards)
        state.finishRecovery(at: Self.t0)
        let operatorAddress = ClientAddress(routing: [Data([9])])
        for n in 0..<7 {
            _ = state.onRequest(ControlRequest(command: .schedule([OwnershipTests.reminder(ReminderID("o\(n)"), of: Self.recipient("q-", on: 0))])),
                                from: operatorAddress, at: Self.t0)
        }
        #expect(state.durable.reminderCount == 7)
    }
}
