import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import ZeroMQ
import ChimeSecurity

/// Schedules a plan through the public control API over one DEALER socket: one `schedule`
/// request per reminder (`batch` 1) or `batch` reminders per request (bulk), with at most
/// `pipeline` requests awaiting their reply (1: strict request-reply).
///
/// Request bodies are built as JSON text by hand while the clock runs (the client's share
/// of the cost stays small on a machine whose cores the cluster also needs); every reply
/// is checked for `"ok":true` and decoded in full only when it is an error.
public final class Ingestor {
    /// How one reminder of the plan is written.
    public struct ReminderShape: Sendable {
        /// The recipient of reminder `id`.
        public var recipient: @Sendable (Int) -> String
        /// The content object as JSON text (`{}` for none).
        public var content: @Sendable (Int) -> String
    }

    /// How long to wait for any one reply before giving up, in seconds.
    public static let replyTimeout: Double = 60
    let socket: Socket

    /// Connects a DEALER to the control endpoint, as a CURVE client with `curve`.
    /// - Throws: `ZeroMQError` for a bad endpoint.
    public init(endpoint: String, curve: CurveClientKeys? = nil) throws {
        let context = try Context()
        socket = try Socket(.dealer, context: context)
        try socket.set(.linger(milliseconds: 0))
        try socket.set(.sendHighWaterMark(0))
        try socket.set(.receiveHighWaterMark(0))
        try curve?.secure(socket, for: endpoint)
        try socket.connect(to: endpoint)
    }

    deinit { socket.close() }

    /// Schedules every reminder of `dues` (ids `0..<dues.count`, in that order).
    /// - Returns: the wall time from the first send to the last reply, in seconds, and the
    ///   number of requests.
    /// - Throws: `WireError` when the coordinator rejects a request; `BenchError` when a
    ///   reply does not come within ``replyTimeout``.
    /// - Parameter stop: checked at least every 100 ms; a requested stop throws.
    public func schedule(dues: [Double], shape: ReminderShape, batch: Int, pipeline: Int, stop: StopSignal) throws
        -> (seconds: Double, requests: Int)
    {
        precondition(batch >= 1 && pipeline >= 1, "batch and pipeline are at least 1")
        let requestCount = (dues.count + batch - 1) / batch
        let poller = Poller()
        poller.register(socket, for: .readable)
        var sent = 0
        var answered = 0
        let start = Date()
        while answered < requestCount {
            if stop.isStopRequested { throw BenchError("interrupted") }
            while sent < requestCount && sent - answered < pipeline {
                let ids = (sent * batch)..<min((sent + 1) * batch, dues.count)
                let body = Self.requestBody(requestId: "bench-\(sent)", ids: ids, dues: dues, shape: shape)
                _ = try socket.send([Data(), body], dontWait: false)
                sent += 1
            }
            let waitingSince = Date()
            while try poller.poll(timeout: .milliseconds(100)) == 0 {
                if stop.isStopRequested { throw BenchError("interrupted") }
                if Date().timeIntervalSince(waitingSince) > Self.replyTimeout {
                    throw BenchError("no reply to schedule request \(answered) within \(Self.replyTimeout) s")
                }
            }
            while let frames = try socket.receiveMessage(dontWait: true) {
                guard let body = frames.last else { continue }
                try Self.check(body)
                answered += 1
            }
        }
        return (Date().timeIntervalSince(start), requestCount)
    }

    static let okPrefix = Data(#"{"ok":true"#.utf8)

    /// Throws the reply's error unless it starts `{"ok":true` (replies are encoded with sorted keys).
    static func check(_ reply: Data) throws {
        guard !reply.starts(with: okPrefix) else { return }
        let decoded = try WireCodec().decode(ControlReply<EmptyResult>.self, from: reply)
        throw decoded.error ?? WireError(.malformed, "a schedule reply without ok and without error")
    }

    /// `{"op":"schedule","requestId":…,"reminder":{…}}` for one id, `"reminders":[…]` for more.
    static func requestBody(requestId: String, ids: Range<Int>, dues: [Double], shape: ReminderShape) -> Data {
        var text = #"{"op":"schedule","requestId":"\#(requestId)","#
        if ids.count == 1 {
            text += #""reminder":"#
            appendReminder(ids.lowerBound, due: dues[ids.lowerBound], shape: shape, to: &text)
        } else {
            text += #""reminders":["#
            for id in ids {
                if id != ids.lowerBound { text += "," }
                appendReminder(id, due: dues[id], shape: shape, to: &text)
            }
            text += "]"
        }
        text += "}"
        return Data(text.utf8)
    }

    /// One reminder object; the due instant goes on the wire rounded up to the millisecond
    /// (the wire's precision), so it never fires before the plan's due.
    static func appendReminder(_ id: Int, due: Double, shape: ReminderShape, to text: inout String) {
        let milliseconds = (due * 1000 - 0.001).rounded(.up)
        let at = RFC3339.format(Date(timeIntervalSince1970: milliseconds / 1000))
        text += #"{"id":"\#(id)","recipient":"\#(shape.recipient(id))","content":\#(shape.content(id)),"trigger":{"at":"\#(at)"}}"#
    }
}
