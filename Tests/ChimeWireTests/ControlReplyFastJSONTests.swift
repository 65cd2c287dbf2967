import ChimeCore
import Foundation
import Testing

@testable import ChimeWire

@Suite struct ControlReplyFastJSONTests {
    static let instant = Date(timeIntervalSince1970: 1_798_099_200.125)

    @Test(arguments: [
        ControlReply(requestId: nil, result: ScheduleResult(scheduled: [])),
        ControlReply(requestId: "q1", result: ScheduleResult(scheduled: [
            .init(id: "a", replaced: false, state: .pending, nextFireAt: instant),
        ])),
        ControlReply(
            requestId: "q\"2\\/é\n", result: ScheduleResult(scheduled: [
                .init(id: "a/b", replaced: true, state: .pending, nextFireAt: instant.addingTimeInterval(0.0004)),
                .init(id: "ünï\t", replaced: false, state: .finished, nextFireAt: nil),
                .init(id: "d", replaced: false, state: .disabled, nextFireAt: Date(timeIntervalSince1970: -1.5)),
            ]),
            warnings: ["a: its time is in the past; it fires now", "\u{1}x\"y"]),
        ControlReply(requestId: "q3", result: ScheduleResult(scheduled: []), warnings: []),
    ])
    func scheduleReplyIsByteForByteWhatTheEncoderWrites(reply: ControlReply<ScheduleResult>) {
        let expected = WireCodec().encode(reply)
        let fast = reply.fastJSON()
        #expect(String(decoding: fast, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }

    @Test func errorReplyFallsBackToTheEncoder() {
        var reply = ControlReply(requestId: "q", result: ScheduleResult(scheduled: []))
        reply.ok = false
        reply.result = nil
        reply.error = WireError(.invalidArgument, "no")
        #expect(reply.fastJSON() == WireCodec().encode(reply))
    }
}
