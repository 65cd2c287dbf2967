import ChimeCore
import Foundation
import Testing

@testable import ChimeWire

/// The binary frames stay byte for byte what earlier builds wrote (the hex below is the
/// binary frame of the seeds in Fuzz/corpus/frames, written by the encoder before the
/// codecs were merged), and a string that is not UTF-8 is refused wherever it stands.
@Suite struct BinaryFramesGoldenTests {
    let codec = WireCodec()
    let due = Date(timeIntervalSinceReferenceDate: 820_000_000.123)

    static let dispatchHex =
        "010000000200000072317b3c76b3a20100000000000005000000616c69636577be0f801a70c841020000000577be0f801a70c841"
        + "0100000054020000006869ffffffffffffffffffffffffffffffffffffffff02070000007b226e223a337d"
    static let acknowledgementsHex =
        "010000000200000072317b3c76b3a20100000000000077be0f801a70c841010000000400000000000000"

    var firing: Firing {
        Firing(
            reminderId: "r1", recipient: "alice", dueAt: due,
            content: Content(title: "T", body: "hi", badgeChange: .increment, userInfo: ["n": .integer(3)]),
            attempt: 2, late: true, eventAt: due)
    }

    @Test func dispatchFrameIsByteIdenticalToEarlierBuilds() throws {
        let frames = codec.encodeFrames(DispatchBatch(epoch: 7, leaseMilliseconds: 10_000, firings: [firing]))
        #expect(frames.count == 2)
        #expect(hex(frames[1]) == Self.dispatchHex)
        #expect(try codec.decodeDispatch([frames[0], Data(bytes(Self.dispatchHex))]).firings == [firing])
    }

    @Test func acknowledgementsFrameIsByteIdenticalToEarlierBuilds() throws {
        let acknowledgement = WorkerMessage.Acknowledgement(firingId: firing.firingId, firedAt: due, attempt: 1, epoch: 4)
        let message = WorkerMessage(worker: "w", host: "h", pid: 1, capacity: 64, delivered: 2, acks: [acknowledgement])
        let frames = codec.encodeFrames(message)
        #expect(hex(frames[1]) == Self.acknowledgementsHex)
        #expect(try codec.decodeWorkerMessage(frames) == message)
    }

    /// Byte offsets into `dispatchHex` of a string's first byte: the firing id's reminder
    /// ("r1"), the recipient ("alice"), the title ("T"), the body ("hi") and the userInfo JSON.
    @Test(arguments: [8, 26, 56, 61, 88])
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
        // firedAt's eight bytes follow the firing id (4 + 2 + 8 + 4 bytes after the count).
        damaged.replaceSubrange(22..<30, with: withUnsafeBytes(of: Double.nan.bitPattern.littleEndian) { Array($0) })
        let header = Data(#"{"acks":[],"capacity":64,"delivered":2,"host":"h","pid":1,"worker":"w"}"#.utf8)
        let error = #expect(throws: WireError.self) { try codec.decodeWorkerMessage([header, Data(damaged)]) }
        #expect(error?.message.contains("instant_out_of_range at offset 22") == true, "\(String(describing: error))")
    }

    private func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    private func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }
}
