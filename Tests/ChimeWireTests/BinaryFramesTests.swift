import ChimeCore
import Foundation
import Testing

@testable import ChimeWire

@Suite struct BinaryFramesTests {
    let codec = WireCodec()
    let due = Date(timeIntervalSinceReferenceDate: 820_000_000.123456)

    func firings() -> [Firing] {
        var full = Firing(
            reminderId: "full", recipient: "alice", dueAt: due,
            content: Content(
                title: "T", body: "ünïcødé ✓", action: "Open", launchImage: "img", sound: "default", badgeChange: .increment,
                userInfo: ["n": .integer(3), "nested": .dictionary(["a": .array([.boolean(true), .real(1.5)])])],
                category: "todo", threadId: "t"),
            attempt: 3, late: true, eventAt: due.addingTimeInterval(300))
        full.seq = 42
        let bare = Firing(reminderId: "bare", recipient: "bob", dueAt: due, content: Content(badge: -2))
        let attentive = Firing(
            reminderId: "attentive", recipient: "carol", dueAt: due,
            content: Content(
                title: "T", subtitle: "ünï", interruptionLevel: .critical, relevanceScore: 0.25,
                targetContentIdentifier: "target", filterCriteria: "work", hasAction: false, unhandled: .skip,
                collapseKey: "k"))
        let passive = Firing(reminderId: "passive", recipient: "dan", dueAt: due, content: Content(interruptionLevel: .passive))
        let extended = Firing(
            reminderId: "extended", recipient: "erin", dueAt: due,
            content: Content(
                title: "Allô Zoé", sound: "siren", interruptionLevel: .critical,
                attachments: [NotificationAttachment(identifier: "map", url: "https://example.com/m.png", type: "image/png", size: 9)],
                titleKey: "GREETING", titleArgs: ["Zoé"], bodyKey: "BODY", bodyArgs: [], soundVolume: 0.5))
        let keyOnly = Firing(reminderId: "keyOnly", recipient: "fay", dueAt: due, content: Content(bodyKey: "K"))
        return [full, bare, attentive, passive, extended, keyOnly]
    }

    @Test func dispatchBatchRoundTripsThroughTwoFrames() throws {
        let batch = DispatchBatch(epoch: 7, leaseMilliseconds: 10_000, firings: firings())
        let frames = codec.encodeFrames(batch)
        #expect(frames.count == 2)
        #expect(try codec.decodeDispatch(frames) == batch)
        // A single JSON frame still decodes (instants to the millisecond there).
        #expect(try codec.decodeDispatch([codec.encode(batch)]).firings.map(\.firingId) == batch.firings.map(\.firingId))
    }

    @Test func workerMessageAcknowledgementsRoundTrip() throws {
        let acks = firings().map { WorkerMessage.Acknowledgement(firingId: $0.firingId, firedAt: due, attempt: $0.attempt, epoch: 9) }
        let message = WorkerMessage(worker: "w", host: "h", pid: 1, capacity: 64, delivered: 2, acks: acks)
        #expect(try codec.decodeWorkerMessage(codec.encodeFrames(message)) == message)
        let heartbeat = WorkerMessage(worker: "w", host: "h", pid: 1, delivered: 0)
        #expect(codec.encodeFrames(heartbeat).count == 1)
    }

    @Test func damagedBinaryFramesAreMalformedNotCrashes() {
        let frames = codec.encodeFrames(DispatchBatch(epoch: 1, leaseMilliseconds: 1, firings: firings()))
        for cut in [0, 3, 10, frames[1].count - 1] {
            #expect(throws: WireError(.malformed, "")) { try codec.decodeDispatch([frames[0], frames[1].prefix(cut)]) }
        }
        #expect(throws: WireError(.malformed, "")) { try codec.decodeDispatch([frames[0], frames[1] + Data([0])]) }
        #expect(throws: WireError(.malformed, "")) { try codec.decodeWorkerMessage([Data("{}".utf8), Data(), Data()]) }
    }

    @Test func anUnknownExtendedPartIsRefused() throws {
        let firing = Firing(reminderId: "k", recipient: "fay", dueAt: due, content: Content(bodyKey: "K"))
        var frames = codec.encodeFrames(DispatchBatch(epoch: 1, leaseMilliseconds: 1, firings: [firing]))
        // The extended block is last: its parts byte (8: bodyKey), then the key's length and byte.
        let partsIndex = frames[1].count - 3
        #expect(frames[1][partsIndex] == 8)
        frames[1][partsIndex] = 8 | 64
        #expect(throws: WireError(.malformed, "")) { try codec.decodeDispatch(frames) }
    }
}
