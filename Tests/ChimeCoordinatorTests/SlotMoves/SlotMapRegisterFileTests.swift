import ChimeCore
import ChimeJournal
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// The file-backed map register: compare-and-swap under `flock`, a durable rename, and a
/// total decoder of the file.
@Suite struct SlotMapRegisterFileTests {
    static let map = ShardMap.evenlySplit(shards: 3, slotCount: 64) { id in
        ShardMap.Endpoints(control: "tcp://127.0.0.1:\(7000 + id)", dispatch: "d\(id)", results: "r\(id)", events: "e\(id)", eventsIngest: "i\(id)")
    }
    static let move = SlotMove(id: SlotMoveID("m1"), slots: [0, 1, 2], source: 0, target: 2, slotCount: 64)

    @Test func createReadAndCompareAndSwap() throws {
        let directory = try TemporaryDirectory(prefix: "register")
        let register = SlotMapRegisterFile(path: directory.url.appendingPathComponent("map.json").path)
        #expect(try register.read() == nil)
        #expect(register.stamp() == nil)
        let created = try register.createIfAbsent(map: Self.map)
        #expect(created == SlotMapRecord(map: Self.map))
        // A second create keeps what is there.
        let opened = try #require(created.opening(Self.move))
        #expect(try register.compareAndSwap(expectedVersion: 1, opened))
        #expect(try register.createIfAbsent(map: Self.map).version == 2)
        // A stale writer loses; the winner's record is what a reader sees, exactly.
        #expect(try !register.compareAndSwap(expectedVersion: 1, try #require(created.opening(Self.move))))
        let committed = try #require(try register.read()?.committing(Self.move.id))
        #expect(try register.compareAndSwap(expectedVersion: 2, committed))
        let read = try #require(try register.read())
        #expect(read.version == 3)
        #expect(read.outcomes == [Self.move.id: .committed(mapEpoch: 2)])
        #expect(read.map.ownerID(ofSlot: 1) == 2)
        #expect(read.open.isEmpty)
        #expect(register.stamp() != nil)
    }

    /// Eight threads each add ten moves, rereading on a lost swap: every write lands once.
    @Test func concurrentWritersSerializeOnTheLock() throws {
        let directory = try TemporaryDirectory(prefix: "register")
        let register = SlotMapRegisterFile(path: directory.url.appendingPathComponent("map.json").path)
        try register.createIfAbsent(map: Self.map)
        let lost = LockedCounter()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<10 {
                while true {
                    guard let current = try? register.read() else { continue }
                    let slot = 21 + thread * 2 + (round % 2)
                    let id = SlotMoveID("t\(thread)-\(round)")
                    let move = SlotMove(id: id, slots: [slot], source: 1, target: 0, slotCount: 64)
                    // Open and at once abort: one version step each, no slot left in an open move.
                    guard let next = current.opening(move)?.aborting(id) else { return }
                    if (try? register.compareAndSwap(expectedVersion: current.version, next)) == true { break }
                    lost.increment()
                }
            }
        }
        let final = try #require(try register.read())
        #expect(final.version == 81)
        #expect(final.outcomes.count == 80)
        #expect(final.outcomes.values.allSatisfy { $0 == .aborted })
    }

    @Test func aFileOverTheBoundIsRefusedBeforeItIsRead() throws {
        let directory = try TemporaryDirectory(prefix: "register")
        let path = directory.url.appendingPathComponent("map.json").path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(SlotMapRegisterFile.maximumBytes + 1))
        try handle.close()
        #expect(throws: WireError(.invalidArgument, "the map register \(path) is over \(SlotMapRegisterFile.maximumBytes) bytes (or its size cannot be read)")) {
            try SlotMapRegisterFile(path: path).read()
        }
    }

    @Test func garbageIsRefusedNeverATrap() throws {
        var record = try #require(SlotMapRecord(map: Self.map).opening(Self.move))
        record = try #require(record.aborting(Self.move.id))
        record = try #require(record.opening(SlotMove(id: SlotMoveID("m2"), slots: [3], source: 0, target: 1, slotCount: 64)))
        let good = SlotMapRegisterFile.encode(record)
        #expect(try SlotMapRegisterFile.decode(good) == record)
        let bytes = [UInt8](good)
        for length in stride(from: 0, to: bytes.count, by: 7) {
            #expect(throws: WireError.self) { try SlotMapRegisterFile.decode(Data(bytes[..<length])) }
        }
        var random = SeededRandomNumberGenerator(seed: 27)
        for _ in 0..<500 {
            var damaged = bytes
            damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            do { _ = try SlotMapRegisterFile.decode(Data(damaged)) } catch {}
        }
        // Records that decode as JSON but break a rule.
        let object = try #require(try JSONSerialization.jsonObject(with: good) as? [String: Any])
        func changed(_ change: (inout [String: Any], inout [String: Any]) -> Void) throws -> Data {
            var top = object
            var move = try #require((top["open"] as? [[String: Any]])?.first)
            change(&top, &move)
            top["open"] = [move]
            return try JSONSerialization.data(withJSONObject: top)
        }
        let broken: [Data] = [
            try changed { top, _ in top["format"] = 2 },
            try changed { top, _ in top["version"] = 0 },
            try changed { _, move in move["target"] = 0 },
            try changed { _, move in move["target"] = 9 },
            try changed { _, move in move["slotCount"] = 65 },
            try changed { _, move in move["slots"] = [30] },
            try changed { _, move in move["slots"] = [] as [Int] },
            try changed { _, move in move["id"] = "m1" },
            try changed { top, _ in top["outcomes"] = [["move": "m9", "committed": true]] },
        ]
        #expect(try SlotMapRegisterFile.decode(try changed { _, _ in }) == record)
        for data in broken {
            #expect(throws: WireError.self) { try SlotMapRegisterFile.decode(data) }
        }
    }
}

private final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func increment() { lock.withLock { value += 1 } }
}
