import ChimeCore
import Foundation
import Testing

@testable import ChimeWire

/// Strict JSON and total binary decoding (issue 12): exact codes, fields and messages, and the
/// fast path and the Foundation path answering alike.
@Suite struct StrictRequestTests {
    let codec = WireCodec()

    /// `decodeRequest`'s error for `json`, checked against the Foundation path alone.
    func error(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) -> WireError? {
        let data = Data(json.utf8)
        let viaCodec = Result { () throws(WireError) in try codec.decodeRequest(data) }
        let slow = Result { () throws(WireError) in
            try StrictJSON.check(data)
            return try codec.decode(ControlRequest.self, from: data)
        }
        #expect(ControlRequest(fastJSON: data) == nil, "the fast path must leave \(json) alone", sourceLocation: sourceLocation)
        guard case .failure(let error) = viaCodec, case .failure(let expected) = slow else {
            Issue.record("expected an error for \(json), got \(viaCodec) / \(slow)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(
            (error.code, error.field, error.message) == (expected.code, expected.field, expected.message),
            sourceLocation: sourceLocation)
        return error
    }

    static let trigger = #"{"at":"2026-12-24T08:00:00Z"}"#

    @Test func duplicateKeysAreMalformedWhereverTheyAre() {
        let top = error(#"{"op":"cancel","op":"ping","all":true}"#)
        #expect(top?.code == .malformed)
        #expect(top?.field == nil)
        #expect(top?.message == "the key \"op\" appears twice in one object")
        let nested = error(
            #"{"op":"schedule","reminders":[{"recipient":"a","trigger":\#(Self.trigger)},"#
                + #"{"recipient":"b","trigger":{"at":"2026-12-24T08:00:00Z","at":"2027-01-01T00:00:00Z"}}]}"#)
        #expect(nested?.code == .malformed)
        #expect(nested?.field == "reminders[1].trigger")
        // Equal after unescaping is equal.
        #expect(error(#"{"op":"ping","\u006fp":"status"}"#)?.code == .malformed)
    }

    @Test func trailingCommasAndDeepNestingAreMalformed() {
        #expect(error(#"{"op":"ping",}"#)?.message == "the message is not valid JSON")
        let deep = String(repeating: "[", count: 70) + String(repeating: "]", count: 70)
        let nested = error(#"{"op":"schedule","reminder":{"recipient":"a","trigger":\#(Self.trigger),"content":{"userInfo":{"k":\#(deep)}}}}"#)
        #expect(nested?.code == .malformed)
        #expect(nested?.message == "the message nests objects and arrays deeper than 64 levels")
    }

    @Test(arguments: [
        (#"{"op":"schedule","reminder":{"recipient":"a","trigger":\#(trigger),"contents":{}}}"#,
         "reminder.contents", #"unknown field "contents"; did you mean "content"?"#),
        (#"{"op":"schedule","reminders":[{"recipient":"a","trigger":\#(trigger)},{"recipient":"a","trigger":\#(trigger),"before":300}]}"#,
         "reminders[1].before", #"unknown field "before"; did you mean "trigger.before"?"#),
        (#"{"op":"list","recipent":"bob"}"#, "recipent", #"unknown field "recipent"; did you mean "recipient"?"#),
        (#"{"op":"cancel","all":true,"recipent":"bob"}"#, "recipent", #"unknown field "recipent"; did you mean "recipient"?"#),
        (#"{"op":"ping","extra":1}"#, "extra", #"unknown field "extra""#),
        (#"{"op":"ping","all":true}"#, "all", #"unknown field "all""#),
        (#"{"op":"schedule","reminder":{"recipient":"a","trigger":{"at":"2026-12-24T08:00:00Z","timezone":"UTC"}}}"#,
         "reminder.trigger.timezone", #"unknown field "timezone"; did you mean "timeZone"?"#),
        (#"{"op":"schedule","reminder":{"recipient":"a","trigger":\#(trigger),"content":{"titel":"x"}}}"#,
         "reminder.content.titel", #"unknown field "titel"; did you mean "title"?"#),
        (#"{"op":"register","recipient":{"id":"a","categories":[{"identifier":"c","actions":[{"identifier":"x","title":"X","destrutive":true}]}]}}"#,
         "recipient.categories[0].actions[0].destrutive", #"unknown field "destrutive"; did you mean "destructive"?"#),
    ])
    func unknownFieldsNameTheirPathWithASuggestion(json: String, field: String, message: String) {
        let refused = error(json)
        #expect(refused?.code == .unknownField)
        #expect(refused?.field == field)
        #expect(refused?.message == message)
    }

    @Test(arguments: [
        (#"{"op":"list","limit":1.5}"#, "limit", "must be a whole number"),
        (#"{"op":"list","limit":1e30}"#, "limit", "must be a whole number"),
        (#"{"op":"badge","recipient":"a","value":2.5}"#, "value", "must be a whole number"),
        (#"{"op":"events","after":-1}"#, "after", "must be a whole number ≥ 0"),
        (#"{"op":"act","firingId":"f@2026-12-24T08:00:00.000Z","action":"snooze","snooze":1e400}"#, "snooze", "must be a number of seconds"),
        (#"{"op":"schedule","reminder":{"recipient":"a","trigger":{"at":"2026-12-24T08:00:00Z","repeat":{"unit":"day","interval":1e30}}}}"#,
         "reminder.trigger.repeat.interval", "must be a whole number"),
        (#"{"op":"schedule","reminders":[{"recipient":"a","trigger":\#(trigger)},{"recipient":"a","trigger":\#(trigger),"nag":{"count":3.5,"interval":600}}]}"#,
         "reminders[1].nag.count", "must be a whole number"),
        (#"{"op":"register","recipient":{"id":"a","maxPending":0.5}}"#, "recipient.maxPending", "must be a whole number"),
    ])
    func numbersOfTheWrongKindAreInvalidArgumentsNamingTheField(json: String, field: String, message: String) {
        let refused = error(json)
        #expect(refused?.code == .invalidArgument)
        #expect(refused?.field == field)
        #expect(refused?.message == message)
    }

    @Test func errorsInAListNameTheElement() {
        var reminders = (0..<3).map { _ in #"{"recipient":"a","trigger":\#(Self.trigger)}"# }
        reminders.append(#"{"recipient":"a","trigger":{"at":"0000-01-01T00:00:00Z"}}"#)
        let refused = error(#"{"op":"schedule","reminders":[\#(reminders.joined(separator: ","))]}"#)
        #expect(refused?.code == .invalidArgument)
        #expect(refused?.field == "reminders[3].trigger.at")
        #expect(refused?.message == "'0000-01-01T00:00:00Z' does not exist: year 0 is outside 0001–9999")
    }

    @Test func theFastPathStillTakesItsShapes() throws {
        let data = Data(#"{"op":"cancel","recipient":"bob","all":false,"requestId":"c1"}"#.utf8)
        let fast = try #require(ControlRequest(fastJSON: data))
        #expect(try codec.decode(ControlRequest.self, from: data) == fast)
        try StrictJSON.check(data)
    }

    // MARK: Binary frames

    /// A results message whose acknowledgements frame says it holds `count` of them.
    func acknowledgementsFrame(count: UInt32, body: [UInt8]) -> [Data] {
        let header = codec.encode(WorkerMessage(worker: "w", host: "h", pid: 1, delivered: 0))
        return [header, Data(withUnsafeBytes(of: count.littleEndian) { Array($0) } + body)]
    }

    @Test func aNineByteFrameCannotReserveGigabytes() {
        // 4 billion acknowledgements announced, five bytes there: refused before any allocation.
        let refused = #expect(throws: WireError.self) {
            try codec.decodeWorkerMessage(acknowledgementsFrame(count: .max, body: [0, 0, 0, 0, 0]))
        }
        #expect(refused?.code == .malformed)
        #expect(refused?.message == "the acknowledgements frame does not decode: binary: length_past_end at offset 0")
        let dispatch = codec.encode(DispatchBatch(epoch: 1, leaseMilliseconds: 1, firings: []))
        let firings = #expect(throws: WireError.self) {
            try codec.decodeDispatch([dispatch, Data([0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0])])
        }
        #expect(firings?.message == "the firings frame does not decode: binary: length_past_end at offset 0")
    }

    @Test(arguments: [Double.nan, .infinity, -1e300, 4e11])
    func anAcknowledgementOutsideYearsOneToNineThousandNineHundredNinetyNineIsMalformed(firedAt: Double) {
        let ack = WorkerMessage.Acknowledgement(
            firingId: FiringID(ReminderKey("a", of: "r"), dueAtMilliseconds: 1_798_099_200_000), firedAt: Date(timeIntervalSinceReferenceDate: firedAt), attempt: 1, epoch: 1)
        let frames = codec.encodeFrames(WorkerMessage(worker: "w", host: "h", pid: 1, delivered: 1, acks: [ack]))
        #expect(throws: WireError(.malformed, "")) { try codec.decodeWorkerMessage(frames) }
    }

    @Test func invalidUTF8InABinaryStringIsMalformed() throws {
        // One acknowledgement whose firing id's reminder key is the lone byte 0xFF (due at
        // 1970-01-01T00:00:00.000Z, no nag); a key without a recipient reads as a legacy key.
        var body: [UInt8] = [1, 0, 0, 0, 0xFF] + [UInt8](repeating: 0, count: 8 + 4)
        body += withUnsafeBytes(of: Double(0).bitPattern.littleEndian) { Array($0) }
        body += [1, 0, 0, 0] + [UInt8](repeating: 0, count: 8)
        let frames = acknowledgementsFrame(count: 1, body: body)
        #expect(throws: WireError(.malformed, "")) { try codec.decodeWorkerMessage(frames) }
        // The same with a valid id decodes: the framing above is right.
        body[4] = UInt8(ascii: "a")
        #expect(try codec.decodeWorkerMessage(acknowledgementsFrame(count: 1, body: body)).acks.map(\.firingId) == [FiringID(ReminderKey(legacy: "a"), dueAtMilliseconds: 0)])
    }

    @Test(arguments: [
        (#"{"worker":"w","host":"h","pid":1,"capacity":9223372036854775807,"delivered":0,"acks":[]}"#, "capacity"),
        (#"{"worker":"w","host":"h","pid":1,"capacity":-1,"delivered":0,"acks":[]}"#, "capacity"),
        (#"{"worker":"w","host":"h","pid":1,"capacity":1,"delivered":-5,"acks":[]}"#, "delivered"),
        (#"{"worker":"","host":"h","pid":1,"capacity":1,"delivered":0,"acks":[]}"#, "worker"),
        (#"{"worker":"w","host":"h","pid":1,"capacity":1,"delivered":0,"acks":[{"firingId":"f@2026-12-24T08:00:00.000Z","firedAt":"2026-12-24T08:00:00Z","attempt":0,"epoch":1}]}"#,
         "acks[0].attempt"),
    ])
    func workerMessagesOutOfRangeAreInvalid(json: String, field: String) {
        let refused = #expect(throws: WireError.self) { try codec.decodeWorkerMessage([Data(json.utf8)]) }
        #expect(refused?.code == .invalidArgument)
        #expect(refused?.field == field)
    }

    @Test func theLargestCapacityIsAccepted() throws {
        let message = WorkerMessage(worker: "w", host: "h", pid: 1, capacity: WorkerMessage.maximumCapacity, delivered: 0)
        #expect(try codec.decodeWorkerMessage(codec.encodeFrames(message)) == message)
    }

    /// `delivered` pages (issue 37): a `limit` outside 1…10,000 and another listing's cursor
    /// are refused; a page request goes round the wire unchanged.
    @Test func deliveredLimitsAndCursorsAreChecked() throws {
        let zero = error(#"{"op":"delivered","recipient":"alice","limit":0}"#)
        #expect((zero?.code, zero?.field) == (.invalidArgument, "limit"))
        let listCursor = PageCursor(kind: .list, text: "r1").text
        let foreign = error(#"{"op":"delivered","recipient":"alice","cursor":"\#(listCursor)"}"#)
        #expect((foreign?.code, foreign?.field) == (.invalidArgument, "cursor"))
        #expect(foreign?.message == "the cursor belongs to another listing; pass back a nextCursor unchanged")
        let cursor = PageCursor(kind: .delivered, key: [0, 0, 0, 2] + Array("alice/r#1".utf8))
        let request = ControlRequest(command: .delivered("alice", remove: nil, limit: 3, cursor: cursor))
        let decoded = try codec.decodeRequest(codec.encode(request))
        guard case .delivered(let recipient, let remove, let limit, let back) = decoded.command else {
            Issue.record("\(decoded.command)")
            return
        }
        #expect(recipient == "alice" && remove == nil && limit == 3)
        #expect(back?.deliveredKey?.position == 2 && back?.deliveredKey?.firingId == "alice/r#1")
    }
}

