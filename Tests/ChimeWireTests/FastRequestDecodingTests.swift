import ChimeCore
import ChimeTestSupport
import Foundation
import Testing

@testable import ChimeWire

/// `ControlRequest(fastJSON:)` against the Foundation path (`StrictJSON.check`, then
/// `JSONDecoder`) on the same bytes: whenever the fast path answers it must equal that path's
/// result, and `WireCodec.decodeRequest(_:)` must answer exactly as that path alone, errors
/// included.
@Suite struct FastRequestDecodingTests {
    let codec = WireCodec()

    /// What the Foundation path alone makes of `data`.
    func slowDecode(_ data: Data) -> Result<ControlRequest, WireError> {
        Result { () throws(WireError) in
            try StrictJSON.check(data)
            return try codec.decode(ControlRequest.self, from: data)
        }
    }

    /// Checks the fast path on `data` against `JSONDecoder`; returns whether it fell back.
    @discardableResult
    func expectSameAsJSONDecoder(
        _ data: Data, requireDecodable: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let slow = slowDecode(data)
        if requireDecodable, case .failure(let error) = slow {
            Issue.record(
                "JSONDecoder refused \(String(decoding: data, as: UTF8.self)): \(error)", sourceLocation: sourceLocation)
        }
        let fast = ControlRequest(fastJSON: data)
        if let fast {
            #expect(slow == .success(fast), "\(String(decoding: data, as: UTF8.self))", sourceLocation: sourceLocation)
        }
        let viaCodec = Result { () throws(WireError) in try codec.decodeRequest(data) }
        switch (viaCodec, slow) {
        case (.success(let value), .success(let expected)):
            #expect(value == expected, sourceLocation: sourceLocation)
        case (.failure(let error), .failure(let expected)):
            #expect(
                error.code == expected.code && error.message == expected.message && error.field == expected.field,
                "\(error) != \(expected)", sourceLocation: sourceLocation)
        default:
            Issue.record("decodeRequest gave \(viaCodec), JSONDecoder \(slow)", sourceLocation: sourceLocation)
        }
        return fast == nil
    }

    /// Whether `reminder` holds a value the fast path leaves to `JSONDecoder`: a `userInfo`
    /// real that is a whole number from 2^53 to what an Int64 holds (`1e+16` in JSON), which
    /// `JSONDecoder` re-reads as a `Decimal` when it tries an Int64.
    static func needsFallback(_ reminder: Reminder) -> Bool {
        func needsFallback(_ value: PropertyListValue) -> Bool {
            switch value {
            case .real(let number):
                return number.rounded() == number && number.magnitude >= 0x1p53 && Int64(exactly: number) != nil
            case .array(let values): return values.contains(where: needsFallback)
            case .dictionary(let entries): return entries.values.contains(where: needsFallback)
            case .string, .integer, .boolean: return false
            }
        }
        return reminder.content.userInfo.map { needsFallback(.dictionary($0)) } ?? false
    }

    @Test func matchesJSONDecoderOnEncodedRandomReminders() {
        var maker = RandomReminderMaker(seed: 0x00C4_1AE5, jsonSafe: true)
        var fallbacks = 0
        var fastReminders: [Reminder] = []
        for index in 0..<2_000 {
            let reminder = maker.reminder()
            let request = ControlRequest(requestId: index % 3 == 0 ? nil : "r-\(index)", command: .schedule([reminder]))
            let fellBack = expectSameAsJSONDecoder(codec.encode(request), requireDecodable: true)
            #expect(fellBack == Self.needsFallback(reminder), "\(reminder)")
            if fellBack {
                fallbacks += 1
            } else {
                fastReminders.append(reminder)
            }
        }
        #expect(fallbacks == 36)

        let batch = codec.encode(ControlRequest(requestId: "batch", command: .schedule(fastReminders)))
        #expect(ControlRequest(fastJSON: batch) != nil)
        expectSameAsJSONDecoder(batch, requireDecodable: true)
    }

    @Test func matchesJSONDecoderOnHandVariedRequests() {
        var maker = RandomReminderMaker(seed: 0x5EED_0002, jsonSafe: true)
        var writer = VariedJSONWriter(seed: 0x5EED_0003)
        var fallbacks = 0
        for index in 0..<2_000 {
            let reminders = (0..<(index % 10 == 0 ? 3 : 1)).map { _ in maker.reminder() }
            let text = writer.scheduleRequest(requestId: index % 4 == 0 ? nil : "r-\(index)", reminders: reminders)
            let fellBack = expectSameAsJSONDecoder(Data(text.utf8), requireDecodable: true)
            #expect(fellBack == reminders.contains(where: Self.needsFallback), "\(text)")
            if fellBack { fallbacks += 1 }
        }
        #expect(fallbacks == 56)
    }

    @Test func matchesJSONDecoderOnRemindersWithAttentionFields() {
        var maker = RandomReminderMaker(seed: 0xA77E_0001, jsonSafe: true, attention: true)
        var writer = VariedJSONWriter(seed: 0xA77E_0002)
        var fastCount = 0
        for index in 0..<500 {
            let reminder = maker.reminder()
            let request = ControlRequest(requestId: "r-\(index)", command: .schedule([reminder]))
            let fellBack = expectSameAsJSONDecoder(codec.encode(request), requireDecodable: true)
            #expect(fellBack == Self.needsFallback(reminder), "\(reminder)")
            let text = writer.scheduleRequest(requestId: "r-\(index)", reminders: [reminder])
            let variedFellBack = expectSameAsJSONDecoder(Data(text.utf8), requireDecodable: true)
            #expect(variedFellBack == Self.needsFallback(reminder), "\(text)")
            if !fellBack { fastCount += 1 }
        }
        #expect(fastCount > 450)
    }

    @Test func decodesTheBenchmarkShapeOnTheFastPath() throws {
        let body = String(repeating: "Chime benchmark body. ", count: 5).prefix(100)
        var text = #"{"op":"schedule","requestId":"bench-0","reminders":["#
        for id in 0..<1_000 {
            if id > 0 { text += "," }
            let at = RFC3339.format(Date(timeIntervalSince1970: 1_800_000_000 + Double(id) / 1000))
            text += #"{"id":"\#(id)","recipient":"user-\#(id % 1000)","content":{"body":"\#(body)"},"#
            text += #""trigger":{"at":"\#(at)"}}"#
        }
        text += "]}"
        let request = try #require(ControlRequest(fastJSON: Data(text.utf8)))
        #expect(slowDecode(Data(text.utf8)) == .success(request))
        guard case .schedule(let reminders) = request.command else {
            Issue.record("expected schedule, got \(request.command)")
            return
        }
        #expect(reminders.count == 1_000)
    }

    /// A request using every reminder field, escapes, raw non-ASCII text and each kind of
    /// `userInfo` value.
    static let validRequest = #"""
        {"op":"schedule","requestId":"r-1","reminders":[{"id":"a-é世👋🏽","recipient":"alice",
        "content":{"title":"T","body":"hi \"x\" \\ \/ \n\t\u00e9\ud83d\ude00 ü","badge":"+1","sound":null,
        "userInfo":{"n":1,"r":1.5,"b":true,"f":false,"a":[1,{"k":"v"},[]],"e":1e3,"z":-0,"s":"ß"}},
        "trigger":{"at":"2026-12-24T09:00:00","timeZone":"Europe/Berlin","repeat":{"unit":"week","interval":2},
        "rrule":null,"rdates":["2027-01-02T03:04:05Z","2027-01-03T09:00"],"exdates":null,"monthEnd":"clamp",
        "before":"5m","misfire":"fireAll","misfireThreshold":60.5},"enabled":false,"nag":{"count":3,"interval":"10m"}},
        {"recipient":"bob","content":null,"trigger":{"at":"2026-12-24T08:00:00.123+01:00","repeat":"day","before":300},
        "enabled":null,"nag":null,"id":null}]}
        """#

    @Test func decodesEveryFieldOnTheFastPath() throws {
        let data = Data(Self.validRequest.utf8)
        let request = try #require(ControlRequest(fastJSON: data))
        #expect(slowDecode(data) == .success(request))
        guard case .schedule(let reminders) = request.command, reminders.count == 2 else {
            Issue.record("expected two reminders, got \(request.command)")
            return
        }
        #expect(reminders[0].content.body == "hi \"x\" \\ / \n\té😀 ü")
        #expect(reminders[0].content.userInfo?["e"] == .integer(1000))
        #expect(reminders[0].content.userInfo?["z"] == .integer(0))
        #expect(reminders[0].nag == NagPolicy(count: 3, interval: 600))
        #expect(reminders[1].id == "" && reminders[1].enabled && reminders[1].content == Content())
    }

    @Test func answersEveryPrefixOfARequestAsJSONDecoderDoes() {
        let bytes = Array(Self.validRequest.utf8)
        for length in 0..<bytes.count {
            #expect(expectSameAsJSONDecoder(Data(bytes[..<length])))
        }
        #expect(!expectSameAsJSONDecoder(Data(bytes)))
        #expect(!expectSameAsJSONDecoder(Data((" \n\t\r" + Self.validRequest + "\r\n\t ").utf8)))
    }

    /// Requests the fast path decodes itself.
    @Test(arguments: [
        #"{"op":"ping"}"#, #"{"op":"status","requestId":null}"#, #"{"requestId":"x","op":"ping"}"#,
        #"{"\u006fp":"p\u0069ng"}"#, #"{"op":"schedule","reminders":[]}"#,
        #"{"op":"schedule","reminders":null,"reminder":{"recipient":"a","trigger":{"at":"2026-12-24T08:00:00Z"}}}"#,
        #"{"op":"cancel","all":true}"#, #"{"op":"cancel","ids":[]}"#, #"{"op":"cancel","recipient":"x","all":false}"#,
        #"{"op":"cancel","ids":["a","b"],"recipient":"x","match":{"k":"v","é":"ß"}}"#,
    ])
    func decodesCommonShapesWithoutJSONDecoder(_ json: String) {
        #expect(!expectSameAsJSONDecoder(Data(json.utf8), requireDecodable: true))
    }

    /// A request scheduling one reminder for `a` with the given `content` and `trigger` JSON,
    /// and `extra` members (`,"key":value`).
    static func schedule(
        content: String = "{}", trigger: String = #"{"at":"2026-12-24T08:00:00Z"}"#, extra: String = ""
    ) -> String {
        #"{"op":"schedule","reminder":{"recipient":"a","content":\#(content),"trigger":\#(trigger)\#(extra)}}"#
    }

    static let unusualRequests: [String] = [
        "", " ", "not json", "{", "}", "[1,2]", "null", "1", #""op""#, #"{"op":"ping""#, #"{"op":"ping"}}"#,
        #"{"op":"ping"} x"#, #"{"op":"ping"},"#, #"{"op":"ping",}"#, #"{,"op":"ping"}"#, #"{"op" "ping"}"#,
        #"{"op":"ping" "requestId":"x"}"#, "{'op':'ping'}", #"{"op":ping}"#, #"/*c*/{"op":"ping"}"#,
        "\u{FEFF}{\"op\":\"ping\"}", "{\"op\":\"ping\"}\u{0}", #"{"op":"explode"}"#, #"{"op":"list"}"#,
        #"{"op":"stats"}"#, #"{"op":"PING"}"#, #"{"op":5}"#, #"{"op":null}"#, #"{"requestId":5,"op":"ping"}"#,
        #"{"op":"cancel"}"#, #"{"op":"cancel","match":{}}"#, #"{"op":"cancel","match":{"k":1}}"#,
        #"{"op":"cancel","ids":[null]}"#, #"{"op":"retry","firingId":"x"}"#, #"{"op":"ping","op":"status"}"#,
        #"{"op":"ping","extra":1}"#, #"{"op":"schedule"}"#, #"{"op":"schedule","reminders":null}"#,
        #"{"op":"schedule","reminders":{}}"#, #"{"op":"schedule","reminders":"x"}"#, #"{"op":"schedule","reminder":[]}"#,
        #"{"op":"schedule","reminders":[],"reminder":5}"#, #"{"op":"schedule","reminders":[null]}"#,
        #"{"op":"schedule","reminders":[{"recipient":"a"}]}"#,
        #"{"op":"schedule","reminder":{"recipient":"a","recipient":"b","trigger":{"at":"2026-12-24T08:00:00Z"}}}"#,
        #"{"op":"schedule","reminder":{"recipient":5,"trigger":{"at":"2026-12-24T08:00:00Z"}}}"#,
        #"{"op":"schedule","reminder":{"recipient":null,"trigger":{"at":"2026-12-24T08:00:00Z"}}}"#,
        #"{"op":"schedule","reminder":{"recipient":"a","trigger":null}}"#,
        schedule(extra: #","enabled":"yes""#), schedule(extra: #","enabled":1"#), schedule(extra: #","extra":1"#),
        schedule(extra: #","nag":{"count":"3","interval":600}"#), schedule(extra: #","nag":{"count":3.5,"interval":600}"#),
        schedule(extra: #","nag":{"count":3,"interval":null}"#), schedule(extra: #","nag":{"count":3}"#),
        schedule(extra: #","nag":{"count":3,"interval":"10 minutes"}"#), schedule(extra: #","nag":{"count":3,"interval":600,"x":1}"#),
        schedule(content: "[]"), schedule(content: #"{"title":5}"#), schedule(content: #"{"subtitles":"x"}"#),
        schedule(content: #"{"userInfo":[]}"#), schedule(content: #"{"userInfo":{"k":null}}"#),
        schedule(content: #"{"userInfo":{"k":1,"k":2}}"#), schedule(content: #"{"userInfo":{"é":1,"e\u0301":2}}"#),
        schedule(content: #"{"badge":1.5}"#), schedule(content: #"{"badge":"+2"}"#), schedule(content: #"{"badge":"1"}"#),
        schedule(content: #"{"badge":true}"#), schedule(content: #"{"badge":null}"#), schedule(content: #"{"badge":"+\u0031"}"#),
        schedule(trigger: #"{"at":5}"#), schedule(trigger: #"{"at":null}"#), schedule(trigger: "{}"), schedule(trigger: #""x""#),
        schedule(trigger: #"{"at":"2026-12-24T08:00"}"#), schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","timeZone":"UTC"}"#),
        schedule(trigger: #"{"at":"2026-02-30T08:00:00Z"}"#), schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","timeZone":5}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","repeat":5}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","repeat":"second"}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","repeat":{"unit":"fortnight"}}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","repeat":{}}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","repeat":{"unit":"day","interval":1.5}}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","repeat":{"unit":"day","interval":2.0}}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","repeat":null,"rrule":"FREQ=SOMETIMES"}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","rrule":5}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","rdates":"x"}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","rdates":[null]}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","exdates":["yesterday"]}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","monthEnd":"never"}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","misfire":"x"}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","misfireThreshold":-1}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","misfireThreshold":-0.0}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","misfireThreshold":"60"}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","before":null}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","before":"-5m"}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","before":true}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","at2":"x"}"#),
        #"{"op":"ping","reminders":[{"recipient":"a","trigger":{"at":"2026-12-24T08:00:00Z"}}]}"#,
        #"{"op":"status","all":true}"#, #"{"op":"schedule","reminders":[],"ids":["a"]}"#,
        #"{"op":"cancel","all":true,"reminder":null}"#, #"{"op":"cancel","recipent":"bob"}"#,
        schedule(extra: #","contents":{}"#), schedule(extra: #","before":300"#),
        schedule(trigger: #"{"at":"0000-01-01T00:00:00Z"}"#), schedule(trigger: #"{"at":"2016-12-31T23:59:60Z"}"#),
        schedule(trigger: #"{"at":"9999-12-31T23:00:00","timeZone":"America/Los_Angeles"}"#),
        schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","repeat":{"unit":"minute","interval":9223372036854775807}}"#),
    ]

    static let numberLiterals = [
        "0", "-0", "-0.0", "0.0", "1", "1.0", "1e3", "1E2", "1E+2", "0.1e1", "100e-2", "1.5", "-2.5e1", "1e-2",
        "1.0000000000000001", "0.99999999999999999999", "1e-400", "-1e-400", "2e-324", "2.5e-324", "4.9e-324",
        "1e-320", "1e308", "1e400", "-1e400", "1.7976931348623157e308", "1.7976931348623159e308",
        "9007199254740992", "9007199254740993", "9007199254740993.0", "9007199254740993e0", "1e16", "1.5e18",
        "4611686018427387904.5", "1234567890123456789.5", "9223372036854775807", "9223372036854775807.0",
        "9223372036854775808", "-9223372036854775808", "-9223372036854775808.0", "-9223372036854775809", "1e19",
        "12345678901234567890", "123456789012345678901234567890", "00", "01", "-01", "-", "1.", ".5", "+1", "1e",
        "1e+", "0x10", "NaN", "Infinity", "-Infinity", "1_000",
    ]

    /// Every number literal where the models read an Int, a Double and a property-list value.
    static let numberRequests: [String] = numberLiterals.flatMap { number in
        [
            schedule(content: #"{"badge":\#(number)}"#), schedule(content: #"{"userInfo":{"v":\#(number)}}"#),
            schedule(content: #"{"userInfo":{"v":[\#(number)]}}"#),
            schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","before":\#(number)}"#),
            schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","misfireThreshold":\#(number)}"#),
            schedule(trigger: #"{"at":"2026-12-24T08:00:00Z","repeat":{"unit":"day","interval":\#(number)}}"#),
            schedule(extra: #","nag":{"count":\#(number),"interval":\#(number)}"#),
        ]
    }

    static let escapes = [
        #"\ud800"#, #"\udc00"#, #"\ud800\u0041"#, #"\ud800x"#, #"\udbff\udfff"#, #"\uDBFF\uDFFF"#, #"\u00"#, #"\u00zz"#,
        #"\x41"#, #"\'"#, #"\u0000"#, #"\/"#, #"\b\f\n\r\t"#, "\t", "\n", "\u{1}", "\u{7F}", #"\"#,
    ]

    static let escapeRequests: [String] = escapes.flatMap { escape in
        [
            schedule(content: #"{"body":"a\#(escape)b"}"#), schedule(content: #"{"userInfo":{"k\#(escape)":1}}"#),
            schedule(content: #"{"bo\#(escape)dy":"x"}"#),
        ]
    }

    /// `userInfo` nested `depth` arrays deep.
    static func nestedRequest(depth: Int) -> String {
        let value = String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
        return schedule(content: #"{"userInfo":{"k":\#(value)}}"#)
    }

    @Test func leavesUnusualRequestsToJSONDecoderWithItsErrors() {
        let requests = Self.unusualRequests + Self.numberRequests + Self.escapeRequests
            + [10, 58, 59, 60, 200, 600].map(Self.nestedRequest(depth:))
        var fallbacks = 0
        for request in requests where expectSameAsJSONDecoder(Data(request.utf8)) {
            fallbacks += 1
        }
        // The rest are shapes the fast path takes: `1e3` as an Int, subnormals, null badges…
        #expect((fallbacks, requests.count) == (354, 575))
    }

    @Test(arguments: [
        [0xFF], [0x80], [0xC3], [0xC0, 0x80], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
        [0xF8, 0x88, 0x80, 0x80, 0x80], [0xC3, 0xA9], [0xF0, 0x9F, 0x98, 0x80],
    ] as [[UInt8]])
    func leavesInvalidUTF8ToJSONDecoder(_ sequence: [UInt8]) {
        let placements = [
            #"{"op":"schedule","reminder":{"recipient":"a"#, #"{"op":"schedule","reminder":{"recipient":"a","content":{"userInfo":{""#,
            #"{"op":"schedule","reminder":{"recipient":"a","content":{""#, #"{"op":"schedule","#,
        ]
        let endings = [
            #"","trigger":{"at":"2026-12-24T08:00:00Z"}}}"#, #"":1}},"trigger":{"at":"2026-12-24T08:00:00Z"}}}"#,
            #"":"x"},"trigger":{"at":"2026-12-24T08:00:00Z"}}}"#, #""reminders":[]}"#,
        ]
        let isValid = String(validating: sequence, as: UTF8.self) != nil
        for (start, end) in zip(placements, endings) {
            let fellBack = expectSameAsJSONDecoder(Data(Array(start.utf8) + sequence + Array(end.utf8)))
            if !isValid { #expect(fellBack) }
        }
    }
}
