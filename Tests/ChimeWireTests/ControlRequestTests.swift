import ChimeCore
import Foundation
import Testing

@testable import ChimeWire

@Suite struct ControlRequestTests {
    let codec = WireCodec()

    func decode(_ json: String) throws(WireError) -> ControlRequest {
        try codec.decode(ControlRequest.self, from: Data(json.utf8))
    }

    func decodeError(_ json: String) -> WireError? {
        do {
            _ = try decode(json)
            return nil
        } catch {
            return error
        }
    }

    @Test func decodesScheduleWithAbsoluteAndFloatingTriggers() throws {
        let request = try decode("""
            {"op":"schedule","requestId":"r-1","reminders":[
              {"id":"a","recipient":"alice","trigger":{"at":"2026-12-24T08:00:00Z"},"content":{"body":"hi","badge":3}},
              {"recipient":"bob","trigger":{"at":"2026-12-24T09:00","timeZone":"Europe/Berlin","repeat":"day"}}
            ]}
            """)
        #expect(request.requestId == "r-1")
        guard case .schedule(let reminders) = request.command else {
            Issue.record("expected schedule, got \(request.command)")
            return
        }
        #expect(reminders.count == 2)
        #expect(reminders[0].id == "a")
        #expect(reminders[0].trigger.start == .instant(Date(timeIntervalSince1970: 1_798_099_200)))
        #expect(reminders[0].content.badge == 3)
        #expect(reminders[1].id == "")
        #expect(reminders[1].trigger.start == .wallClock(try LocalDateTime(parsing: "2026-12-24T09:00"), zoneIdentifier: "Europe/Berlin"))
        #expect(reminders[1].trigger.repeatRule == RepeatRule(unit: .day, interval: 1))
    }

    @Test func acceptsRepeatAsObjectWithInterval() throws {
        let request = try decode("""
            {"op":"schedule","reminder":{"recipient":"a","trigger":{"at":"2026-12-24T08:00:00Z","repeat":{"unit":"week","interval":2}}}}
            """)
        guard case .schedule(let reminders) = request.command else { Issue.record("not schedule"); return }
        #expect(reminders.first?.trigger.repeatRule == RepeatRule(unit: .week, interval: 2))
    }

    @Test(arguments: [
        ("not json", "malformed"),
        ("[1,2]", "invalid_argument"),
        (#"{"requestId":"x"}"#, "invalid_argument"),
        (#"{"op":"explode"}"#, "unknown_op"),
        (#"{"op":"schedule"}"#, "invalid_argument"),
        (#"{"op":"schedule","reminders":[{"recipient":"a"}]}"#, "invalid_argument"),
        (#"{"op":"schedule","reminders":[{"recipient":"a","trigger":{"at":"2026-12-24T08:00"}}]}"#, "invalid_argument"),
        (#"{"op":"schedule","reminders":[{"recipient":"a","trigger":{"at":"tomorrow","timeZone":"Europe/Berlin"}}]}"#, "invalid_argument"),
        (#"{"op":"schedule","reminders":[{"recipient":"a","trigger":{"at":"2026-12-24T08:00:00Z"},"content":{"userInfo":{"k":null}}}]}"#, "invalid_argument"),
        (#"{"op":"cancel"}"#, "invalid_argument"),
        (#"{"op":"list","limit":"ten"}"#, "invalid_argument"),
    ])
    func rejectsBadRequestsWithStableCodes(json: String, code: String) {
        #expect(decodeError(json)?.code.rawValue == code)
    }

    @Test func missingFieldErrorNamesTheFieldPath() {
        let error = decodeError(#"{"op":"schedule","reminders":[{"recipient":"a"}]}"#)
        #expect(error?.field == "reminders[0].trigger")
    }

    @Test func unknownOperationListsTheKnownOnes() {
        let error = decodeError(#"{"op":"explode"}"#)
        #expect(error?.message.contains("schedule, list, cancel") == true)
    }

    @Test func requestsRoundTrip() throws {
        let requests: [ControlRequest] = [
            ControlRequest(requestId: "1", command: .list(ReminderFilter(recipient: "alice", match: ["k": "v"]), all: true, limit: 5)),
            ControlRequest(command: .cancel(ReminderFilter(ids: ["a", "b"]))),
            ControlRequest(command: .cancel(ReminderFilter())),
            ControlRequest(command: .status),
            ControlRequest(command: .ping),
        ]
        for request in requests {
            #expect(try decode(String(decoding: codec.encode(request), as: UTF8.self)) == request)
        }
    }
}

@Suite struct EnvelopeTests {
    @Test func acceptsDealerFramesWithAndWithoutDelimiter() throws {
        let identity = Data([0, 1, 2])
        let body = Data("{}".utf8)
        let withDelimiter = try ControlEnvelope.parse([identity, Data(), body])
        #expect(withDelimiter.routing == [identity, Data()])
        #expect(withDelimiter.body == body)
        let without = try ControlEnvelope.parse([identity, body])
        #expect(without.routing == [identity])
    }

    @Test(arguments: [1, 4])
    func rejectsWrongFrameCounts(count: Int) {
        let frames = [Data([7])] + Array(repeating: Data("x".utf8), count: count - 1)
        #expect(throws: WireError(.malformed, "")) { try ControlEnvelope.parse(frames) }
    }

    @Test func errorReplyKeepsTheDelimiterForRequestClients() {
        let identity = Data([9])
        #expect(ControlEnvelope.replyRouting(for: [identity, Data(), Data("a".utf8), Data("b".utf8)]) == [identity, Data()])
        #expect(ControlEnvelope.replyRouting(for: [identity, Data("a".utf8), Data("b".utf8)]) == [identity])
    }
}
