import ChimeTestSupport
import Foundation
import Testing

@testable import ChimeWire

@Suite struct JSONObjectSplitterTests {
    /// Feeds `text` in pieces of `step` bytes and returns the objects as strings.
    func split(_ text: String, step: Int) throws -> [String] {
        var splitter = JSONObjectSplitter(maximumObjectBytes: 64)
        let bytes = Array(text.utf8)
        var objects: [String] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + step)
            objects += try splitter.feed(Data(bytes[start..<end])).map { String(decoding: $0, as: UTF8.self) }
            start = end
        }
        try splitter.finish()
        return objects
    }

    @Test(arguments: [1, 2, 7, 1000])
    func splitsArraysAndLinesAtAnyReadBoundary(step: Int) throws {
        let array = #" [ {"a":"}{\"]"} , {"b":[1,{"c":2}]} ]  "#
        #expect(try split(array, step: step) == [#"{"a":"}{\"]"}"#, #"{"b":[1,{"c":2}]}"#])
        let lines = "{\"a\":1}\n{\"b\":\"x\\\\\"}\r\n\n{}\n"
        #expect(try split(lines, step: step) == [#"{"a":1}"#, #"{"b":"x\\"}"#, "{}"])
        #expect(try split("[]", step: step) == [])
    }

    @Test(arguments: [
        ("", "the input holds no JSON array or object"),
        ("[{}", "the JSON array is not closed with ] (line 1, byte 3)"),
        ("[{},]", "unexpected ']' at line 1, column 5 (byte 5); expected {"),
        ("[{} {}]", "unexpected '{' at line 1, column 5 (byte 5); expected , or ]"),
        ("[1]", "unexpected '1' at line 1, column 2 (byte 2); expected {"),
        ("{\"a\":1", "the object at line 1, column 1 is not closed at the end of the input (byte 6)"),
        ("{]", "unexpected ']' at line 1, column 2 (byte 2); expected {"),
        ("[{}] x", "unexpected 'x' at line 1, column 6 (byte 6); expected nothing after ]"),
        ("{} [", "unexpected '[' at line 1, column 4 (byte 4); expected {"),
        ("\u{1}", "unexpected byte 0x1 at line 1, column 1 (byte 1); expected [ or {"),
        // NDJSON: a line cut short swallows the rest; the error names the line it starts on.
        ("{\"a\":1}\n  {\"b\":\n{\"c\":3}\n{\"d\":4}\n", "the object at line 2, column 3 is not closed at the end of the input (byte 32)"),
        ("{\"a\":1}\n{\"b\":2}}\n{\"c\":3}\n", "unexpected '}' at line 2, column 8 (byte 16); expected {"),
        ("[\n {\"a\":1},\n {\"b\":2}\n {\"c\":3}\n]", "unexpected '{' at line 4, column 2 (byte 23); expected , or ]"),
        ("{\"a\":1}\r\n{\"b\":[1}\r\n", "the object at line 2, column 1 is not closed at the end of the input (byte 19)"),
    ])
    func refusesWhatIsNotObjects(text: String, message: String) {
        #expect(throws: WireError(.malformed, "")) { _ = try split(text, step: 3) }
        do {
            _ = try split(text, step: 3)
        } catch {
            #expect((error as? WireError)?.message == message)
        }
    }

    @Test func refusesAnObjectBeyondTheLimit() {
        let big = "[{\"a\":\"" + String(repeating: "x", count: 100) + "\"}]"
        #expect(throws: WireError(.tooLarge, "")) { _ = try split(big, step: 10) }
        var splitter = JSONObjectSplitter(maximumObjectBytes: 8)
        #expect(throws: WireError(.tooLarge, "")) { _ = try splitter.feed(Data("{}\n{}\n  {\"a\":12345}".utf8)) }
        do {
            var splitter = JSONObjectSplitter(maximumObjectBytes: 8)
            _ = try splitter.feed(Data("{}\n{}\n  {\"a\":12345}".utf8))
        } catch {
            #expect(error.message == "the object at line 3, column 3 is larger than 8 bytes")
        }
    }

    @Test func garbageNeverTraps() {
        var generator = SeededRandomNumberGenerator(seed: 15)
        let alphabet = Array("{}[]\",\\ \n:a1".utf8)
        for _ in 0..<2000 {
            let length = Int.random(in: 0...40, using: &generator)
            let bytes = (0..<length).map { _ in
                Bool.random(using: &generator) ? alphabet.randomElement(using: &generator) ?? 0 : UInt8.random(in: 0...255, using: &generator)
            }
            var splitter = JSONObjectSplitter(maximumObjectBytes: 16)
            do {
                for object in try splitter.feed(Data(bytes)) {
                    #expect(object.first == UInt8(ascii: "{") && object.last == UInt8(ascii: "}"))
                }
                try splitter.finish()
            } catch {
                #expect([WireError.Code.malformed, .tooLarge].contains(error.code))
            }
        }
    }
}
