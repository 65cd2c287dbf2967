import Foundation
import Testing

@testable import ChimeCore

/// Hostile calendar files (issue 24): deep nesting, many ENDs, many components and alarms.
@Suite struct ICalendarBoundsTests {
    static func refusal(_ text: String) -> ValidationError? {
        do {
            _ = try ICalendarParser.parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func twoHundredThousandNestedBeginsAreRefusedAtTheNestingLimit() throws {
        let text = String(repeating: "BEGIN:X\n", count: 200_000)
        let error = try #require(Self.refusal(text))
        #expect(error.code == .tooLarge)
        #expect(error.message == "BEGIN:X on logical line 17 nests 17 components deep; at most 16 are allowed")
    }

    @Test func sixteenLevelsAreAccepted() throws {
        let text = String(repeating: "BEGIN:X\n", count: 16) + String(repeating: "END:X\n", count: 16)
        var depth = 0
        var component = try #require(try ICalendarParser.parse(text).first)
        while let child = component.components.first {
            component = child
            depth += 1
        }
        #expect(depth == 15)
    }

    @Test func endLinesCostConstantTime() throws {
        // 50,000 unmatched ENDs inside 16 open components: each is one dictionary lookup
        // (formerly a scan of the open components, which with unbounded nesting made a file
        // of n BEGINs and n ENDs cost n²). Generous bound: a debug build on a loaded machine.
        let text = "BEGIN:VCALENDAR\n" + String(repeating: "BEGIN:X\n", count: 15)
            + String(repeating: "END:VEVENT\n", count: 50_000) + "END:VCALENDAR\n"
        let started = ContinuousClock.now
        let roots = try ICalendarParser.parse(text)
        #expect(roots.count == 1)
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test func moreComponentsThanTheLimitAreRefused() throws {
        let text = "BEGIN:VCALENDAR\n" + String(repeating: "BEGIN:VTODO\nEND:VTODO\n", count: ICalendarParser.maximumComponents)
        let error = try #require(Self.refusal(text))
        #expect(error.code == .tooLarge)
        #expect(error.message == "the file holds more than 100000 components (BEGIN lines); split it")
    }

    @Test func moreAlarmsThanTheLimitInOneItemAreRefused() throws {
        let alarm = "BEGIN:VALARM\nTRIGGER:-PT5M\nEND:VALARM\n"
        let text = "BEGIN:VCALENDAR\nBEGIN:VEVENT\n" + String(repeating: alarm, count: 101) + "END:VEVENT\nEND:VCALENDAR\n"
        let error = try #require(Self.refusal(text))
        #expect(error.code == .tooLarge)
        #expect(error.message == "a VEVENT (logical line 303) has more than 100 VALARMs")
        let fits = "BEGIN:VCALENDAR\nBEGIN:VEVENT\n" + String(repeating: alarm, count: 100) + "END:VEVENT\nEND:VCALENDAR\n"
        #expect(Self.refusal(fits) == nil)
    }
}
