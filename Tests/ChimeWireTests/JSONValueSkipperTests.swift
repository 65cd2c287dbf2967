import ChimeTestSupport
import Foundation
import Testing

@testable import ChimeWire

/// The one value-skipping walk and the two scanners built on it.
@Suite struct JSONValueSkipperTests {
    @Test(arguments: [
        (#"{"a":"}\"{","b":[1,{"c":[]}]} tail"#, 29),
        (#"[[],[[]]],"#, 9),
        (#""x\\"  "#, 5),
        (#""a\"b","#, 6),
        ("12.5e3,", 6),
        ("true]", 4),
        ("null}", 4),
        ("-1 ", 2),
        (#"{"a":{"b":1}"#, nil),
        (#""unterminated"#, nil),
        ("]", nil),
        (",", nil),
        (":", nil),
        ("", nil),
        ("123", nil),
    ] as [(String, Int?)])
    func findsTheEndOfOneValue(text: String, end: Int?) {
        #expect(JSONValueSkipper.endOfValue(in: Array(text.utf8), from: 0) == end)
    }

    @Test func aMalformedObjectStillEndsWhereItsBracketsBalance() {
        // What the splitter relies on to report `{"at":}` as one bad item among good ones.
        let text = #"{"trigger":{"at":}} {"next":1}"#
        #expect(JSONValueSkipper.endOfValue(in: Array(text.utf8), from: 0) == 19)
    }

    /// Random arrays of objects (strings full of brackets, quotes and escapes, nesting,
    /// random whitespace): both scanners find exactly the objects that were written.
    @Test func theArrayScannerAndTheObjectSplitterAgree() throws {
        var generator = RandomJSON(seed: 23)
        for round in 0..<500 {
            let objects = (0..<Int.random(in: 0...6, using: &generator.random)).map { _ in generator.object(depth: 0) }
            let document = "[" + generator.space() + objects.joined(separator: generator.space() + "," + generator.space())
                + generator.space() + "]"
            let elements = JSONArrayElements.elements(ofFirst: "a", in: Data((#"{"a":"# + document + "}").utf8))
            #expect(elements.map { $0.map { String(decoding: $0, as: UTF8.self) } } == objects, "round \(round): \(document)")
            var splitter = JSONObjectSplitter()
            var split: [String] = []
            let bytes = Array(document.utf8)
            let step = Int.random(in: 1...16, using: &generator.random)
            for start in stride(from: 0, to: bytes.count, by: step) {
                split += try splitter.feed(Data(bytes[start..<min(bytes.count, start + step)])).map { String(decoding: $0, as: UTF8.self) }
            }
            try splitter.finish()
            #expect(split == objects, "round \(round): \(document)")
        }
    }

    /// Garbage: neither scanner traps, and whatever array the splitter accepts whole, the
    /// array scanner splits the same way.
    @Test func onGarbageTheSplitterNeverAcceptsWhatTheArrayScannerSplitsDifferently() {
        var generator = SeededRandomNumberGenerator(seed: 2325)
        let alphabet = Array(#"{}[]",:\ a1"#.utf8) + [0x0A, 0xFF]
        for _ in 0..<5000 {
            let body = (0..<Int.random(in: 0..<40, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator) ?? 0
            }
            let document = [UInt8(ascii: "[")] + body
            let elements = JSONArrayElements.elements(ofFirst: "a", in: Data(#"{"a":"#.utf8 + document))
            var splitter = JSONObjectSplitter()
            guard let objects = try? splitter.feed(Data(document)), (try? splitter.finish()) != nil else { continue }
            #expect(elements == objects, "\(String(decoding: document, as: UTF8.self))")
        }
    }
}

/// Random JSON text with the bytes a structure scanner can trip on.
private struct RandomJSON {
    var random: SeededRandomNumberGenerator

    init(seed: UInt64) { random = SeededRandomNumberGenerator(seed: seed) }

    mutating func space() -> String { ["", "", " ", "\n", "\t", "\r\n "].randomElement(using: &random) ?? "" }

    mutating func string() -> String {
        let pieces = ["a", "}", "]", "{", "[", ",", ":", #"\""#, #"\\"#, #"\/"#, #"\u00e9"#, "ü", " "]
        return "\"" + (0..<Int.random(in: 0...5, using: &random)).map { _ in pieces.randomElement(using: &random) ?? "" }.joined()
            + "\""
    }

    mutating func value(depth: Int) -> String {
        switch Int.random(in: 0...(depth < 3 ? 6 : 3), using: &random) {
        case 0: return string()
        case 1: return ["0", "-12.5e3", "7"].randomElement(using: &random) ?? "0"
        case 2: return ["true", "false", "null"].randomElement(using: &random) ?? "null"
        case 3: return string()
        case 4, 5: return object(depth: depth + 1)
        default:
            let items = (0..<Int.random(in: 0...3, using: &random)).map { _ in value(depth: depth + 1) }
            return "[" + items.joined(separator: "," + space()) + "]"
        }
    }

    mutating func object(depth: Int) -> String {
        let members = (0..<Int.random(in: 0...3, using: &random)).map { _ in
            string() + space() + ":" + space() + value(depth: depth + 1)
        }
        return "{" + space() + members.joined(separator: "," + space()) + space() + "}"
    }
}
