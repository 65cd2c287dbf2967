import ChimeClient
import ChimeCore
import ChimeWire
import Foundation
import Testing

/// The bytes of a base64url text without padding.
func unpadded(_ text: String) -> Data? {
    var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while standard.utf8.count % 4 != 0 { standard += "=" }
    return Data(base64Encoded: standard)
}

@Suite struct ClusterCursorTests {
    @Test func roundTripsEveryPositionKind() throws {
        let cursor = ClusterCursor(
            kind: .list, mapEpoch: 300,
            positions: [0: .done, 1: .after(Array("id\u{0}alice".utf8)), 2: .start, 4095: .after([])])
        let text = cursor.text
        #expect(ClusterCursor.isClusterCursor(text))
        #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
        #expect(try ClusterCursor(text: text, expecting: .list) == cursor)
        #expect(cursor.shardCursor(1) == PageCursor(kind: .list, text: "id\u{0}alice"))
        #expect(cursor.shardCursor(0) == nil)
        #expect(cursor.shardCursor(7) == nil)
        #expect(!cursor.isFinished)
    }

    /// The exact bytes: marker, kind, epoch, count, then id/state/key per shard in id order.
    @Test func encodesTheDocumentedBytes() throws {
        let cursor = ClusterCursor(kind: .deadLetters, mapEpoch: 2, positions: [1: .after([0x41]), 0: .done])
        let bytes = try #require(unpadded(cursor.text))
        #expect(Array(bytes) == [0x53, 0x44, 2, 2, 0, 2, 1, 1, 1, 0x41])
    }

    @Test(arguments: [
        ("", "cut short"),
        ("!!!", "is not valid"),
        (PageCursor(kind: .list, text: "a").text, "is not a cluster cursor"),
        (ClusterCursor(kind: .deadLetters, mapEpoch: 1, positions: [0: .start]).text, "belongs to another listing"),
    ])
    func refusesCursorsOfOtherForms(text: String, reason: String) {
        do {
            _ = try ClusterCursor(text: text, expecting: .list)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.field == "cursor")
            #expect(error.message.contains(reason))
        }
    }

    @Test(arguments: [
        ([0x53, 0x4C, 1, 0] as [UInt8], "names 0 shards"),
        ([0x53, 0x4C, 1, 2, 0, 0, 0, 2], "names shard 0 twice"),
        ([0x53, 0x4C, 1, 1, 0, 1, 5, 0x41], "is cut short"),
        ([0x53, 0x4C, 1, 1, 0, 2, 0], "has bytes left over"),
        ([0x53, 0x4C, 1, 1, 0, 9], "unknown position state 9"),
        ([0x53, 0x4C, 1, 1, 0x80, 0x20, 0], "names shard 4096"),
        ([0x53, 0x4C, 0xFF], "cut short or damaged"),
    ])
    func refusesDamagedBytes(bytes: [UInt8], reason: String) {
        let text = Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: "")
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        do {
            _ = try ClusterCursor(text: text, expecting: .list)
            Issue.record("accepted \(bytes)")
        } catch {
            #expect(error.field == "cursor")
            #expect(error.message.contains(reason), "\(error.message)")
        }
    }

    /// Garbage never crashes the decoder: random bytes behind the marker, random text, and
    /// every truncation and one-byte change of a valid cursor either decode or are refused.
    @Test func decodesGarbageTotally() {
        var generator = SystemRandomNumberGenerator()
        var refused = 0
        for round in 0..<3000 {
            let length = Int.random(in: 0...40, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if round % 2 == 0 { bytes = [0x53, 0x4C] + bytes }
            let text = Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            do { _ = try ClusterCursor(text: text, expecting: .list) } catch { refused += 1 }
        }
        #expect(refused > 2000)
        let valid = Array(unpadded(ClusterCursor(
            kind: .list, mapEpoch: 9, positions: [0: .after(Array("abc".utf8)), 3: .done]).text) ?? Data())
        #expect(valid.count == 12)
        for cut in 0..<valid.count {
            for change in [nil, UInt8(0xFF)] {
                var bytes = Array(valid.prefix(cut + 1))
                if let change { bytes[cut] = change }
                let text = Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: "")
                _ = try? ClusterCursor(text: text, expecting: .list)
            }
        }
        for text in ["U", "UA", "U___", String(repeating: "U", count: ClusterCursor.maximumTextLength + 1)] {
            #expect(throws: WireError(.invalidArgument, "")) { try ClusterCursor(text: text, expecting: .list) }
        }
    }
}

@Suite struct PageMergeTests {
    typealias Page = PageMerge.ShardPage<String, String>

    @Test func takesOnlyWhatIsBelowTheLowestFrontier() {
        let pages = [
            Page(shard: 0, items: [("a", "a"), ("m", "m")], frontier: "m"),
            Page(shard: 1, items: [("b", "b")], frontier: nil),
            Page(shard: 2, items: [("c", "c"), ("z", "z")], frontier: nil),
        ]
        let merged = PageMerge.merge(pages, limit: 10)
        #expect(merged.items == ["a", "b", "c", "m"])
        #expect(merged.next == [0: .after("m"), 1: .done, 2: .after("m")])
    }

    @Test func cutsAtTheLimitAndContinuesEveryShardAfterTheBoundary() {
        let pages = [
            Page(shard: 0, items: [("a", "a"), ("d", "d")], frontier: nil),
            Page(shard: 1, items: [("b", "b"), ("c", "c")], frontier: "c"),
        ]
        let merged = PageMerge.merge(pages, limit: 2)
        #expect(merged.items == ["a", "b"])
        #expect(merged.next == [0: .after("b"), 1: .after("b")])
    }

    @Test func finishesWhenEveryShardFinishedAndAllFit() {
        let pages = [Page(shard: 0, items: [("a", "a")], frontier: nil), Page(shard: 5, items: [], frontier: nil)]
        let merged = PageMerge.merge(pages, limit: 2)
        #expect(merged.items == ["a"])
        #expect(merged.next == [0: .done, 5: .done])
    }

    /// A shard that ended its page early (its examined budget) with no items still moves on.
    @Test func movesAShardPastAnEmptyBudgetPage() {
        let pages = [Page(shard: 0, items: [], frontier: "k"), Page(shard: 1, items: [("z", "z")], frontier: nil)]
        let merged = PageMerge.merge(pages, limit: 5)
        #expect(merged.items == [])
        #expect(merged.next == [0: .after("k"), 1: .after("k")])
    }
}
