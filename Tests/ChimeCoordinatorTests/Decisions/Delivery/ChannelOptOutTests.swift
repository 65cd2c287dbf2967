import ChimeCore
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// Issue 40 item 7, preferences per delivery channel: a channel opted out of for every firing
/// leaves the batch's destinations of the recipient, one opted out of for a category leaves
/// that category's firings' own destination lists, and a retried dead letter's list leaves out
/// both. Pure, time passed in.
@Suite struct ChannelOptOutTests {
    typealias Run = DurableStateTests.Run
    static let t0 = DurableStateTests.t0
    static let hook = DestinationStateTests.hook
    static let phone = DestinationStateTests.phone
    static let android = Destination.fcm(FCMDestination(token: "fcm-token-1"))

    static func reminder(_ id: ReminderID, category: String?) -> Reminder {
        Reminder(
            id: id, recipient: "alice", content: Content(body: "b", category: category),
            trigger: Trigger(start: .instant(t0.addingTimeInterval(60))))
    }

    @Test func optedOutChannelsLeaveTheBatchAndTheCategorysFirings() throws {
        var run = Run()
        run.request(.register(Recipient(
            id: "alice", categories: [NotificationCategory(identifier: "promo"), NotificationCategory(identifier: "chat")],
            destinations: [Self.hook, Self.phone, Self.android],
            optedOutChannels: ChannelOptOuts(["*": [.fcm], "promo": [.apns]]))))
        run.request(.schedule([
            Self.reminder("plain", category: nil), Self.reminder("sale", category: "promo"), Self.reminder("hi", category: "chat"),
        ]))
        run.worker(at: Self.t0)
        let batch = try #require(DestinationStateTests.batches(run.tick(at: Self.t0.addingTimeInterval(60))).first)
        #expect(batch.firings.count == 3)
        #expect(batch.destinations == ["alice": [Self.hook, Self.phone]], "fcm is opted out of for every firing")
        let sale = try #require(batch.firings.first { $0.reminderId == "sale" })
        #expect(batch.firingDestinations == [sale.firingId.description: [Self.hook]], "promo skips apns too; the others use the batch's list")
        #expect(run.state.durable.recipients.optingOutByCategory == ["alice"])
        // With "*" only, no firing has a list of its own, and dispatch looks nothing up per firing.
        run.request(.register(Recipient(
            id: "alice", destinations: [Self.hook, Self.phone, Self.android], optedOutChannels: ChannelOptOuts(["*": [.fcm]]))))
        #expect(run.state.durable.recipients.optingOutByCategory.isEmpty)
    }

    @Test func noOptOutsLeaveTheBatchAsBefore() throws {
        var run = Run()
        run.request(.register(Recipient(id: "alice", destinations: [Self.hook, Self.android])))
        run.request(.schedule([Self.reminder("plain", category: nil)]))
        run.worker(at: Self.t0)
        let batch = try #require(DestinationStateTests.batches(run.tick(at: Self.t0.addingTimeInterval(60))).first)
        #expect(batch.destinations == ["alice": [Self.hook, Self.android]])
        #expect(batch.firingDestinations == nil)
    }

    @Test func theRegistrationRoundTripsAndTheCommandLineParses() throws {
        let json = #"{"id":"alice","optedOutChannels":{"*":["fcm"],"promo":["webhook","apns"]}}"#
        let recipient = try JSONDecoder().decode(Recipient.self, from: Data(json.utf8))
        #expect(recipient.optedOutChannels == ChannelOptOuts(["*": [.fcm], "promo": [.apns, .webhook]]))
        #expect(recipient.optedOutChannels?.channels(forCategory: "promo") == [.fcm, .apns, .webhook])
        #expect(recipient.optedOutChannels?.channels(forCategory: "other") == [.fcm])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(String(decoding: try encoder.encode(recipient), as: UTF8.self).contains(#""optedOutChannels":{"*":["fcm"],"promo":["webhook","apns"]}"#))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Recipient.self, from: Data(#"{"id":"a","optedOutChannels":{"*":["sms"]}}"#.utf8))
        }
        do {
            try Recipient(id: "a", optedOutChannels: ChannelOptOuts(["": [.fcm]])).validate()
            Issue.record("an empty key passed")
        } catch {
            #expect(error.field == "optedOutChannels")
        }
        // More entries than categories allowed: refused while decoding, before the values are.
        let many = (0...Recipient.maximumCategories).map { "\"c\($0)\":[\"fcm\"]" }.joined(separator: ",")
        #expect { try JSONDecoder().decode(Recipient.self, from: Data("{\"id\":\"a\",\"optedOutChannels\":{\(many)}}".utf8)) } throws: { error in
            "\(error)".contains("at most \(Recipient.maximumCategories) entries, not \(Recipient.maximumCategories + 1)")
        }
        let limit = (0..<Recipient.maximumCategories).map { "\"c\($0)\":[\"fcm\"]" }.joined(separator: ",")
        #expect(try JSONDecoder().decode(Recipient.self, from: Data("{\"id\":\"a\",\"optedOutChannels\":{\(limit)}}".utf8))
            .optedOutChannels?.channels.count == Recipient.maximumCategories)
    }
}
