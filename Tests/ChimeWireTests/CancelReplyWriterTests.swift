import ChimeCore
import Foundation
import Testing

@testable import ChimeWire

@Suite struct CancelReplyWriterTests {
    static let awkwardIDs: [ReminderID] = ["a", "a/b", "q\"2\\/é\n", "ünï\t", "\u{1}\u{1f}x", "😀", "\u{7f}", "line\u{2028}sep"]

    @Test(arguments: [
        ControlReply(requestId: nil, result: CancelResult(cancelled: [])),
        ControlReply(requestId: "c1", result: CancelResult(cancelled: ["only"])),
        ControlReply(requestId: "c\"2\\/é\n\u{0}", result: CancelResult(cancelled: awkwardIDs)),
        ControlReply(requestId: nil, result: CancelResult(cancelled: awkwardIDs)),
    ])
    func cancelReplyIsByteForByteWhatTheEncoderWrites(reply: ControlReply<CancelResult>) {
        let expected = WireCodec().encode(reply)
        #expect(String(decoding: reply.fastJSON(), as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }

    @Test func idsAppendedInSlicesMakeTheSameReplyAsAllAtOnce() {
        var writer = CancelReplyWriter()
        writer.append(Self.awkwardIDs.prefix(3))
        writer.append([ReminderID]())
        writer.append(Self.awkwardIDs.dropFirst(3))
        #expect(writer.count == Self.awkwardIDs.count)
        #expect(writer.reply(requestId: "c") == WireCodec().encode(ControlReply(requestId: "c", result: CancelResult(cancelled: Self.awkwardIDs))))
    }

    @Test func errorReplyFallsBackToTheEncoder() {
        var reply = ControlReply(requestId: "q", result: CancelResult(cancelled: []))
        reply.ok = false
        reply.result = nil
        reply.error = WireError(.invalidArgument, "no")
        #expect(reply.fastJSON() == WireCodec().encode(reply))
    }
}
