import ChimeCore
import Foundation
import Testing

@testable import ChimeWire

/// `list --order next-fire` on the wire (issue 42): the order, its cursor and the request field.
@Suite struct NextFireKeyTests {
    let codec = WireCodec()
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)

    @Test func ordersSoonestFirstThenByKeyWithNoFiringLast() {
        let early = NextFireKey(fireAt: Self.t0, key: ReminderKey("z", of: "alice"))
        let tieA = NextFireKey(fireAt: Self.t0.addingTimeInterval(1), key: ReminderKey("a", of: "bob"))
        let tieB = NextFireKey(fireAt: Self.t0.addingTimeInterval(1), key: ReminderKey("b", of: "alice"))
        let beforeEpoch = NextFireKey(fireMilliseconds: -5, key: ReminderKey("old", of: "alice"))
        let noneA = NextFireKey(fireAt: nil, key: ReminderKey("a", of: "alice"))
        let noneB = NextFireKey(fireAt: nil, key: ReminderKey("b", of: "alice"))
        #expect([noneB, tieB, early, noneA, tieA, beforeEpoch].sorted() == [beforeEpoch, early, tieA, tieB, noneA, noneB])
    }

    @Test(arguments: [Int64(-5), 0, 1_798_099_200_123, Int64.max, Int64.min])
    func cursorBytesRoundTripAndOrderAsTheKeys(milliseconds: Int64) throws {
        let place = NextFireKey(fireMilliseconds: milliseconds, key: ReminderKey("r-1", of: "alice"))
        #expect(NextFireKey(cursorBytes: place.cursorBytes) == place)
        let none = NextFireKey(fireMilliseconds: nil, key: ReminderKey("r-1", of: "alice"))
        #expect(NextFireKey(cursorBytes: none.cursorBytes) == none)
        // The bytes order as the places do (within the same key).
        let later = NextFireKey(fireMilliseconds: milliseconds == .max ? nil : milliseconds + 1, key: place.key)
        #expect(place.cursorBytes.lexicographicallyPrecedes(later.cursorBytes))
    }

    @Test func damagedCursorBytesAreRefused() {
        #expect(NextFireKey(cursorBytes: []) == nil)
        #expect(NextFireKey(cursorBytes: [2, 65]) == nil)
        #expect(NextFireKey(cursorBytes: [0, 1, 2, 3]) == nil)
        #expect(NextFireKey(cursorBytes: [0] + [UInt8](repeating: 0, count: 8)) == nil)
        #expect(NextFireKey(cursorBytes: [1]) == nil)
        #expect(NextFireKey(cursorBytes: [1, 0xFF, 0xFE]) == nil)
        #expect(NextFireKey(cursorBytes: [1] + Array("a\u{0}b\u{0}c".utf8)) == nil)
    }

    @Test func listRequestCarriesItsOrder() throws {
        let request = try codec.decode(ControlRequest.self, from: Data(#"{"op":"list","order":"next-fire","limit":5}"#.utf8))
        #expect(request.command == .list(ReminderFilter(), all: false, limit: 5, cursor: nil, order: .nextFire))
        let plain = try codec.decode(ControlRequest.self, from: Data(#"{"op":"list"}"#.utf8))
        #expect(plain.command == .list(ReminderFilter(), all: false, limit: nil, cursor: nil, order: .id))
        // Encoded: "order" only when it is not the default.
        #expect(String(decoding: codec.encode(plain), as: UTF8.self).contains("order") == false)
        #expect(try codec.decode(ControlRequest.self, from: codec.encode(request)) == request)
    }

    @Test func listRequestRefusesAnUnknownOrderAndACursorOfTheOtherOrder() {
        #expect(throws: WireError.self) {
            try codec.decode(ControlRequest.self, from: Data(#"{"op":"list","order":"soonest"}"#.utf8))
        }
        let idCursor = PageCursor(kind: .list, text: "a").text
        #expect(throws: WireError.self) {
            try codec.decode(ControlRequest.self, from: Data(#"{"op":"list","order":"next-fire","cursor":"\#(idCursor)"}"#.utf8))
        }
    }
}
