import ChimeCore
import Foundation
import Testing

@testable import ChimeWire

@Suite struct FireEventTests {
    let codec = WireCodec()

    func makeEvent() -> FireEvent {
        let due = Date(timeIntervalSince1970: 1_798_070_400)
        var firing = Firing(
            reminderId: "standup", recipient: "alice", dueAt: due,
            content: Content(title: "Stand-up", body: "now", sound: "default", badge: 2, userInfo: ["room": .string("4b"), "n": .integer(3)]))
        firing.seq = 7
        return FireEvent(seq: 7, publisher: "w1", firing: firing, firedAt: due.addingTimeInterval(0.0042))
    }

    @Test func encodesTheDocumentedShape() throws {
        let event = makeEvent()
        let json = String(decoding: codec.encode(event), as: UTF8.self)
        #expect(json == #"{"attempt":1,"badge":2,"body":"now","dueAt":"2026-12-24T00:00:00.000Z","firedAt":"2026-12-24T00:00:00.004Z","firingId":"alice/standup@2026-12-24T00:00:00.000Z","late":false,"publisher":"w1","recipient":"alice","reminderId":"standup","seq":7,"sound":"default","title":"Stand-up","type":"fire","userInfo":{"n":3,"room":"4b"}}"#)
        #expect(event.topic == "fire.alice")
    }

    @Test func roundTripsThroughJSON() throws {
        let event = makeEvent()
        let decoded = try codec.decode(FireEvent.self, from: codec.encode(event))
        #expect(decoded.firing == event.firing)
        #expect(decoded.seq == 7)
        #expect(RFC3339.format(decoded.firedAt) == "2026-12-24T00:00:00.004Z")
    }

    @Test func firingIDIsRecipientReminderAndInstant() {
        #expect(FiringID(ReminderKey("r", of: "a"), dueAt: Date(timeIntervalSince1970: 1.5)).text == "a/r@1970-01-01T00:00:01.500Z")
    }

    @Test func dispatchBatchAndWorkerMessageRoundTrip() throws {
        let batch = DispatchBatch(epoch: 3, leaseMilliseconds: 10_000, firings: [makeEvent().firing])
        #expect(try codec.decode(DispatchBatch.self, from: codec.encode(batch)) == batch)
        let ack = WorkerMessage.Acknowledgement(
            firingId: FiringID(ReminderKey("r", of: "a"), dueAtMilliseconds: 1_500, nag: 3), firedAt: Date(timeIntervalSince1970: 2), attempt: 1, epoch: 3)
        let message = WorkerMessage(worker: "w", host: "h", pid: 4, delivered: 9, acks: [ack])
        #expect(try codec.decode(WorkerMessage.self, from: codec.encode(message)) == message)
    }

    @Test func errorReplyHasOkFalseAndCode() throws {
        let reply = ControlReply<EmptyResult>(requestId: "q", error: WireError(.unknownTimeZone, "no such zone", field: "reminder.trigger.timeZone"))
        let json = String(decoding: codec.encode(reply), as: UTF8.self)
        #expect(json == #"{"error":{"code":"unknown_time_zone","field":"reminder.trigger.timeZone","message":"no such zone"},"ok":false,"requestId":"q"}"#)
    }
}

@Suite struct FireEventFastJSONTests {
    let codec = WireCodec()

    @Test func handWrittenJSONEqualsTheEncodersBytes() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let due = Date(timeIntervalSince1970: 1_798_070_400.25)
        var rich = Firing(
            reminderId: "r/1", recipient: "alice", dueAt: due,
            content: Content(
                title: "Quote \" back\\slash /slash", body: "line\nbreak\ttab \u{01} ünïcødé ✓ 🎉", action: "Open",
                launchImage: "img", sound: "default", badgeChange: .increment,
                userInfo: ["z": .integer(1), "a": .array([.real(1.5), .boolean(false), .string("x/y")]), "m": .dictionary(["k": .string("v")])],
                category: "todo", threadId: "t"),
            attempt: 2, late: true, eventAt: due.addingTimeInterval(600))
        rich.seq = 99
        let plain = Firing(reminderId: "p", recipient: "bob", dueAt: due, content: Content(badge: -3))
        let bare = Firing(reminderId: "b", recipient: "c", dueAt: due, content: Content())
        var attentive = rich
        attentive.missed = 3
        attentive.content.subtitle = "sub \"title\""
        attentive.content.interruptionLevel = .timeSensitive
        attentive.content.relevanceScore = 1
        attentive.content.targetContentIdentifier = "room/4"
        attentive.content.filterCriteria = "work"
        attentive.content.hasAction = false
        attentive.content.unhandled = .replace
        attentive.content.collapseKey = "match/7"
        var scored = plain
        scored.content.relevanceScore = 0.000_012_5
        scored.content.interruptionLevel = .passive
        for firing in [rich, plain, bare, attentive, scored] {
            for shard in [nil, 0, 2] as [Int?] {
                var event = FireEvent(seq: firing.seq ?? 1, publisher: "w-1", firing: firing, firedAt: due.addingTimeInterval(0.004))
                event.shard = shard
                let fast = event.fastJSON(userInfoEncoder: encoder)
                #expect(String(decoding: fast, as: UTF8.self) == String(decoding: codec.encode(event), as: UTF8.self))
                #expect(String(decoding: fast, as: UTF8.self).contains("\"shard\":") == (shard != nil))
                let decoded = try codec.decode(FireEvent.self, from: fast)
                #expect(decoded.firing.firingId == firing.firingId)
                #expect(decoded.shard == shard)
                #expect(decoded.firing.content == firing.content)
            }
        }
    }
}
