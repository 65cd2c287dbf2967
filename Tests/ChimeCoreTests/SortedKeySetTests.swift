import Testing

@testable import ChimeCore

@Suite struct SortedKeySetTests {
    @Test func agreesWithASortedArrayUnderRandomInsertsAndRemovals() {
        var generator = SystemRandomNumberGenerator()
        var set = SortedKeySet<Int>()
        var reference = Set<Int>()
        for step in 0..<20_000 {
            let key = Int.random(in: 0..<3000, using: &generator)
            if Bool.random(using: &generator) || step < 2000 {
                #expect(set.insert(key) == reference.insert(key).inserted)
            } else {
                #expect(set.remove(key) == (reference.remove(key) != nil))
            }
        }
        let sorted = reference.sorted()
        #expect(Array(set) == sorted)
        #expect(set.count == sorted.count)
        for after in [-1, 0, 17, 1500, 2999, 5000] {
            #expect(Array(set.keys(after: after)) == sorted.filter { $0 > after })
        }
        #expect(sorted.allSatisfy(set.contains))
        #expect(!set.contains(-5))
    }

    /// A chunk that grew past the maximum and split keeps no buffer of twice its size (the
    /// lower half stayed in the grown buffer before: 32.5 bytes a key at a million, 19.0 now).
    @Test func splitChunksKeepBuffersOfTheirOwnSize() {
        var set = SortedKeySet<Int>()
        // Ascending keys fill the last chunk to the maximum and split it, again and again;
        // keys between them then split the lower halves too.
        for key in stride(from: 0, to: 40_000, by: 2) { set.insert(key) }
        for key in stride(from: 1, to: 40_000, by: 2) { set.insert(key) }
        #expect(set.count == 40_000)
        #expect(Array(set) == Array(0..<40_000))
        let capacities = set.chunkCapacities
        #expect(capacities.count >= 40_000 / SortedKeySet<Int>.maximumChunkCount)
        // malloc rounds a buffer up by a few keys (257 and 515 here); a lower half left in the
        // buffer that grew past the maximum had room for 1,023.
        #expect(capacities.allSatisfy { $0 < SortedKeySet<Int>.maximumChunkCount * 3 / 2 })
    }

    @Test func buildsFromUnsortedKeysWithDuplicatesAndEqualsByContents() {
        let built = SortedKeySet([5, 3, 9, 3, 1, 5])
        #expect(Array(built) == [1, 3, 5, 9])
        var grown = SortedKeySet<Int>()
        for key in [9, 1, 5, 3] { grown.insert(key) }
        #expect(built == grown)
        #expect(Array(SortedKeySet<Int>().keys(after: 3)).isEmpty)
        var emptied = SortedKeySet(0..<1200)
        for key in 0..<1200 { emptied.remove(key) }
        #expect(emptied.isEmpty && Array(emptied).isEmpty)
        emptied.insert(4)
        #expect(Array(emptied) == [4])
    }
}
