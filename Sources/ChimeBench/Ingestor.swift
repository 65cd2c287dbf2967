import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import ZeroMQ
import ChimeSecurity

/// Schedules a plan through the public control API over one DEALER socket per shard: one
/// `schedule` request per reminder (`batch` 1) or `batch` reminders per request (bulk), with
/// at most `pipeline` requests awaiting their reply on each socket (1: strict request-reply).
/// Each shard's socket carries only the reminders of its recipients (its lane), so the shards
/// ingest side by side from the one thread.
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
        /// The trigger's spread in seconds (`chime bench --spread`), or `nil` for none.
        public var spread: Double? = nil
    }

    /// How long to wait for any one reply before giving up, in seconds.
    public static let replyTimeout: Double = 60
    let sockets: [Socket]

    /// Connects a DEALER to each control endpoint (one per shard, in shard order), as a
    /// CURVE client with `curve`.
    /// - Throws: `ZeroMQError` for a bad endpoint.
    public init(endpoints: [String], curve: CurveClientKeys? = nil) throws {
        let context = try Context()
        sockets = try endpoints.map { endpoint in
            let socket = try Socket(.dealer, context: context)
            try socket.set(.linger(milliseconds: 0))
            try socket.set(.sendHighWaterMark(0))
            try socket.set(.receiveHighWaterMark(0))
            try curve?.secure(socket, for: endpoint)
            try socket.connect(to: endpoint)
            return socket
        }
    }

    /// Connects a DEALER to one control endpoint.
    /// - Throws: `ZeroMQError` for a bad endpoint.
    public convenience init(endpoint: String, curve: CurveClientKeys? = nil) throws {
        try self.init(endpoints: [endpoint], curve: curve)
    }

    deinit { for socket in sockets { socket.close() } }

    /// Schedules every reminder of `dues` (ids `0..<dues.count`, in that order) on the one
    /// (first) socket.
    /// - Returns: as ``schedule(lanes:dues:shape:batch:pipeline:stop:)``.
    public func schedule(dues: [Double], shape: ReminderShape, batch: Int, pipeline: Int, stop: StopSignal) throws
        -> (seconds: Double, requests: Int)
    {
        try schedule(lanes: [Array(dues.indices)], dues: dues, shape: shape, batch: batch, pipeline: pipeline, stop: stop)
    }

    /// Schedules lane k's ids (in their order) on socket k, `batch` per request and at most
    /// `pipeline` requests in flight per socket; a socket whose lane is empty sends nothing.
    /// - Returns: the wall time from the first send to the last reply, in seconds, and the
    ///   number of requests.
    /// - Throws: `WireError` when a coordinator rejects a request; `BenchError` when no reply
    ///   comes within ``replyTimeout`` or there are more lanes than sockets.
    /// - Parameter stop: checked at least every 100 ms; a requested stop throws.
    public func schedule(lanes: [[Int]], dues: [Double], shape: ReminderShape, batch: Int, pipeline: Int, stop: StopSignal) throws
        -> (seconds: Double, requests: Int)
    {
        precondition(batch >= 1 && pipeline >= 1, "batch and pipeline are at least 1")
        guard lanes.count <= sockets.count else { throw BenchError("\(lanes.count) lanes for \(sockets.count) sockets") }
        let requestCounts = lanes.map { ($0.count + batch - 1) / batch }
        let requestCount = requestCounts.reduce(0, +)
        let poller = Poller()
        for socket in sockets { poller.register(socket, for: .readable) }
        var sent = [Int](repeating: 0, count: lanes.count)
        var answered = [Int](repeating: 0, count: lanes.count)
        var answeredTotal = 0
        let start = Date()
        while answeredTotal < requestCount {
            if stop.isStopRequested { throw BenchError("interrupted") }
            for (lane, ids) in lanes.enumerated() {
                while sent[lane] < requestCounts[lane] && sent[lane] - answered[lane] < pipeline {
                    let first = sent[lane] * batch
                    let slice = ids[first..<min(first + batch, ids.count)]
                    let requestId = lanes.count == 1 ? "bench-\(sent[lane])" : "bench-\(lane)-\(sent[lane])"
                    let body = Self.requestBody(requestId: requestId, ids: slice, dues: dues, shape: shape)
                    _ = try sockets[lane].send([Data(), body], dontWait: false)
                    sent[lane] += 1
                }
            }
            let waitingSince = Date()
            while try poller.poll(timeout: .milliseconds(100)) == 0 {
                if stop.isStopRequested { throw BenchError("interrupted") }
                if Date().timeIntervalSince(waitingSince) > Self.replyTimeout {
                    throw BenchError("no reply to schedule request \(answeredTotal) within \(Self.replyTimeout) s")
                }
            }
            for lane in lanes.indices {
                while let frames = try sockets[lane].receiveMessage(dontWait: true) {
                    guard let body = frames.last else { continue }
                    try Self.check(body)
                    answered[lane] += 1
                    answeredTotal += 1
                }
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
    static func requestBody(requestId: String, ids: some Collection<Int>, dues: [Double], shape: ReminderShape) -> Data {
        var text = #"{"op":"schedule","requestId":"\#(requestId)","#
        if ids.count == 1, let only = ids.first {
            text += #""reminder":"#
            appendReminder(only, due: dues[only], shape: shape, to: &text)
        } else {
            text += #""reminders":["#
            var isFirst = true
            for id in ids {
                if !isFirst { text += "," }
                isFirst = false
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
        let spread = shape.spread.map { #","spread":\#($0)"# } ?? ""
        text += #"{"id":"\#(id)","recipient":"\#(shape.recipient(id))","content":\#(shape.content(id)),"trigger":{"at":"\#(at)"\#(spread)}}"#
    }
}
