import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator
import ZeroMQ
import ChimeCoordinator

/// Long pages are encoded off the coordinator's loop (`ReplyEncoder`); a connection still gets
/// its replies in the order it asked, and each page is what `WireCodec` writes, within
/// `limits.maxReplyBytes`.
@Suite(.serialized) struct ReplyEncoderTests {
    let start = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z

    @Test func pagesEncodedOffTheLoopKeepTheirPlaceAmongTheirConnectionsReplies() throws {
        let cluster = try InprocCluster(start: start)
        defer { cluster.stop() }
        let client = try cluster.controlClient()
        let reminders = (0..<600).map { index in
            Reminder(
                id: ReminderID(String(format: "r-%04d", index)), recipient: "alice", content: Content(title: "t/\(index)", body: "b\n\"q\""),
                trigger: Trigger(start: .instant(start.addingTimeInterval(3600 + Double(index)))))
        }
        _ = try client.send(ControlRequest(command: .schedule(reminders)), expecting: ScheduleResult.self)

        let dealer = try Socket(.dealer, context: cluster.context)
        defer { dealer.close() }
        try dealer.set(.linger(milliseconds: 0))
        try dealer.set(.receiveTimeout(milliseconds: 10_000))
        try dealer.connect(to: cluster.configuration.endpoints.control.connect)
        var expected: [String] = []
        for round in 0..<10 {
            // A page of 600 (encoded on the reply encoder's thread), then a ping (on the loop).
            _ = try dealer.send([Data(#"{"op":"list","all":true,"limit":600,"requestId":"list-\#(round)"}"#.utf8)])
            _ = try dealer.send([Data(#"{"op":"ping","requestId":"ping-\#(round)"}"#.utf8)])
            expected += ["list-\(round)", "ping-\(round)"]
        }
        var received: [String] = []
        let codec = WireCodec()
        for _ in expected {
            let frames = try #require(try dealer.receiveMessage())
            let body = try #require(frames.last)
            struct Probe: Decodable { var requestId: String? }
            let requestId = try JSONDecoder().decode(Probe.self, from: body).requestId ?? "-"
            received.append(requestId)
            if requestId.hasPrefix("list") {
                let page = try codec.decode(ControlReply<ListResult>.self, from: body)
                // Cut at `limits.maxReplyBytes` (64 KiB): 268 of these listings fit, then the cursor.
                #expect(page.result?.reminders.map(\.reminder.id) == reminders.prefix(268).map(\.id))
                #expect(page.result?.total == nil && page.result?.nextCursor != nil)
                #expect(body.count <= 65_536)
                #expect(codec.encode(page) == body, "byte for byte what WireCodec writes")
            }
        }
        #expect(received == expected)
    }
}
