import ChimeCore
import Foundation
import Testing

@testable import ChimeWire

@Suite struct JSONArrayElementsTests {
    @Test func theElementsOfAListReplyAreWhatWireCodecWritesForEachListing() throws {
        let instant = Date(timeIntervalSince1970: 1_798_099_200.125)
        let listings = ["a", "b\"],[{", "c\\"].map { id in
            ReminderListing(
                reminder: Reminder(
                    id: ReminderID(id), recipient: "r", content: Content(body: "x],{\"reminders\":[", userInfo: ["reminders": .array([.string("]")])]),
                    trigger: Trigger(start: .instant(instant))),
                state: .pending, nextFireAt: instant, deliveredCount: 0, lastFiredAt: nil)
        }
        let codec = WireCodec()
        let reply = codec.encode(ControlReply(requestId: "q\"reminders\":[", result: ListResult(reminders: listings, total: nil, nextCursor: "TGE")))
        let elements = try #require(JSONArrayElements.elements(ofFirst: "reminders", in: reply))
        #expect(elements == listings.map { codec.encode($0) })
        let empty = codec.encode(ControlReply(requestId: nil, result: ListResult(reminders: [], total: 0)))
        #expect(JSONArrayElements.elements(ofFirst: "reminders", in: empty) == [])
    }

    @Test(arguments: [
        (#"{"a":[1, "x" ,{"b":[2]} ]}"#, [#"1"#, #""x""#, #"{"b":[2]}"#]),
        (#"{"a":[]}"#, []),
        (#"{"a":[[],[[]]]}"#, ["[]", "[[]]"]),
    ])
    func splitsTopLevelElementsOnly(document: String, expected: [String]) {
        #expect(JSONArrayElements.elements(ofFirst: "a", in: Data(document.utf8)).map { $0.map { String(decoding: $0, as: UTF8.self) } } == expected)
    }

    @Test(arguments: [
        #"{"b":[1]}"#, #"{"a":[1,2"#, #"{"a":["x]}"#, #"{"a":[1,}]}"#, #"{"a":[,1]}"#, #"{"a":[}]}"#, #"{"a":"#, "",
    ])
    func malformedOrMissingArraysAreNil(document: String) {
        #expect(JSONArrayElements.elements(ofFirst: "a", in: Data(document.utf8)) == nil)
    }

    @Test func garbageNeverTraps() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(#"{}[],:"\ a1"#.utf8) + [0, 0xff]
        for _ in 0..<2000 {
            let body = (0..<Int.random(in: 0..<64, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            _ = JSONArrayElements.elements(ofFirst: "a", in: Data(#""a":["#.utf8 + body))
        }
    }
}
