import ChimeCore
import Foundation
import Testing

@testable import ChimeWire

/// The binary frames stay byte for byte their documented layout (the hex below), and a string
/// that is not UTF-8 is refused wherever it stands. Since reminder ids are per recipient, a
/// firing id carries its reminder key (`r1\0alice`) where earlier builds wrote the bare id
/// (`legacyDispatchHex`, the seed in Fuzz/corpus/frames of those builds): such a frame still
/// decodes, its firing id taking the firing's recipient.
@Suite struct BinaryFramesGoldenTests {
    let codec = WireCodec()
    let due = Date(timeIntervalSinceReferenceDate: 820_000_000.123)

    static let dispatchHex =
        "0100000008000000723100616c6963657b3c76b3a20100000000000005000000616c69636577be0f801a70c841020000000577be0f801a70c841"
        + "0100000054020000006869ffffffffffffffffffffffffffffffffffffffff02070000007b226e223a337d"
    static let acknowledgementsHex =
        "0100000008000000723100616c6963657b3c76b3a20100000000000077be0f801a70c841010000000400000000000000"
    static let legacyDispatchHex =
        "010000000200000072317b3c76b3a20100000000000005000000616c69636577be0f801a70c841020000000577be0f801a70c841"
        + "0100000054020000006869ffffffffffffffffffffffffffffffffffffffff02070000007b226e223a337d"

    var firing: Firing {
        Firing(
            reminderId: "r1", recipient: "alice", dueAt: due,
            content: Content(title: "T", body: "hi", badgeChange: .increment, userInfo: ["n": .integer(3)]),
            attempt: 2, late: true, eventAt: due)
    }

    @Test func dispatchFrameKeepsItsLayoutAndAnEarlierBuildsFrameStillDecodes() throws {
        let frames = codec.encodeFrames(DispatchBatch(epoch: 7, leaseMilliseconds: 10_000, firings: [firing]))
        #expect(frames.count == 2)
        #expect(hex(frames[1]) == Self.dispatchHex)
        #expect(try codec.decodeDispatch([frames[0], Data(bytes(Self.dispatchHex))]).firings == [firing])
        #expect(try codec.decodeDispatch([frames[0], Data(bytes(Self.legacyDispatchHex))]).firings == [firing])
    }

    @Test func acknowledgementsFrameKeepsItsLayout() throws {
        let acknowledgement = WorkerMessage.Acknowledgement(firingId: firing.firingId, firedAt: due, attempt: 1, epoch: 4)
        let message = WorkerMessage(worker: "w", host: "h", pid: 1, capacity: 64, delivered: 2, acks: [acknowledgement])
        let frames = codec.encodeFrames(message)
        #expect(hex(frames[1]) == Self.acknowledgementsHex)
        #expect(try codec.decodeWorkerMessage(frames) == message)
    }

    /// Byte offsets into `dispatchHex` of a string's first byte: the firing id's reminder
    /// ("r1"), the recipient ("alice"), the title ("T"), the body ("hi") and the userInfo JSON.
    @Test(arguments: [8, 32, 62, 67, 94])
    func invalidUTF8InAFiringsFrameIsRefused(offset: Int) throws {
        var damaged = bytes(Self.dispatchHex)
        damaged[offset] = 0xFF
        let header = codec.encodeFrames(DispatchBatch(epoch: 7, leaseMilliseconds: 10_000, firings: []))[0]
        let error = #expect(throws: WireError.self) { try codec.decodeDispatch([header, Data(damaged)]) }
        #expect(error?.code == .malformed)
        #expect(error?.message.contains("invalid_utf8") == true, "\(String(describing: error))")
    }

    @Test func invalidUTF8InAnAcknowledgementsFrameIsRefused() throws {
        var damaged = bytes(Self.acknowledgementsHex)
        damaged[8] = 0xC3  // a lead byte followed by "1", not a continuation byte
        let header = Data(#"{"acks":[],"capacity":64,"delivered":2,"host":"h","pid":1,"worker":"w"}"#.utf8)
        let error = #expect(throws: WireError.self) { try codec.decodeWorkerMessage([header, Data(damaged)]) }
        #expect(error?.message.contains("invalid_utf8 at offset 8") == true, "\(String(describing: error))")
    }

    @Test func anInstantOutsideTheSupportedRangeIsRefused() throws {
        var damaged = bytes(Self.acknowledgementsHex)
        // firedAt's eight bytes follow the firing id (4 + 8 + 8 + 4 bytes after the count).
        damaged.replaceSubrange(28..<36, with: withUnsafeBytes(of: Double.nan.bitPattern.littleEndian) { Array($0) })
        let header = Data(#"{"acks":[],"capacity":64,"delivered":2,"host":"h","pid":1,"worker":"w"}"#.utf8)
        let error = #expect(throws: WireError.self) { try codec.decodeWorkerMessage([header, Data(damaged)]) }
        #expect(error?.message.contains("instant_out_of_range at offset 28") == true, "\(String(describing: error))")
    }

    private func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    private func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }
}
