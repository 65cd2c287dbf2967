import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// Calendars, regions and the sun through the coordinator: each change is a journal entry
/// folded by `DurableState.apply`, the same live, replayed, after a snapshot and across a
/// split and merge (a slot move's slices).
@Suite struct BeyondTheClockTests {
    static let t0 = DurableStateTests.t0  // 2026-12-24T08:00:00Z, a Thursday
    static let home = GeoPoint(latitude: 52.52, longitude: 13.405)

    static func north(_ meters: Double) -> GeoPoint {
        GeoPoint(latitude: home.latitude + meters / 111_250, longitude: home.longitude)
    }

    static func expectRecovers(_ run: DurableStateTests.Run, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(run.replayed().durable == run.state.durable, sourceLocation: sourceLocation)
        let reloaded = try run.reloaded()
        #expect(reloaded.durable == run.state.durable, sourceLocation: sourceLocation)
        #expect(reloaded.durable.triggers.regionsOf == run.state.durable.triggers.regionsOf, "derived indexes rebuilt", sourceLocation: sourceLocation)
        let (slice, rest) = run.state.durable.split { $0 == "alice" }
        var merged = rest
        merged.merge(slice)
        #expect(merged == run.state.durable, sourceLocation: sourceLocation)
    }

    @Test func aCalendarChangeReplansEveryReminderThatNamesIt() throws {
        var run = DurableStateTests.Run { $0.dispatchLead = 0 }
        run.worker(at: Self.t0)
        run.request(.register(Recipient(id: "alice", zone: "Europe/Berlin")))
        let daily = Reminder(
            id: "d", recipient: "alice", content: Content(body: "b"),
            trigger: Trigger(
                start: .wallClock(LocalDateTime(year: 2026, month: 12, day: 24, hour: 10), zoneIdentifier: "recipient"),
                repeatRule: RepeatRule(unit: .day, interval: 1), calendars: ["holidays"]))
        // Unknown calendar: refused.
        guard case .failed(let error) = run.request(.schedule([daily])) else { Issue.record("scheduled"); return }
        #expect(error.field == "reminder.trigger.calendars")
        let holidays = ExclusionCalendar(days: [20_447, 20_448])  // 2025-12-25? computed below
        _ = holidays
        let christmas = try JSONDecoder().decode(ExclusionCalendar.self, from: Data(#"{"dates":["2026-12-24","2026-12-25"]}"#.utf8))
        let set = run.request(.trigger(.setCalendar(name: "holidays", calendar: christmas)), at: Self.t0)
        #expect(set == .trigger(.calendar(CalendarResult(name: "holidays", calendar: christmas, reminders: 0))))
        run.request(.schedule([daily]), at: Self.t0)
        // 24th and 25th excluded: next is the 26th, 10:00 Berlin.
        #expect(run.state.schedule.deadline(of: daily.key) == (try RFC3339.parseInstant("2026-12-26T09:00:00Z")))
        // Changing the calendar re-plans it: only the 25th now.
        let smaller = try JSONDecoder().decode(ExclusionCalendar.self, from: Data(#"{"dates":["2026-12-25"]}"#.utf8))
        let changed = run.request(.trigger(.setCalendar(name: "holidays", calendar: smaller)), at: Self.t0)
        #expect(changed == .trigger(.calendar(CalendarResult(name: "holidays", calendar: smaller, reminders: 1))))
        #expect(run.state.schedule.deadline(of: daily.key) == (try RFC3339.parseInstant("2026-12-24T09:00:00Z")))
        // Moving the recipient to Tokyo moves the excluded day with it.
        run.request(.register(Recipient(id: "alice", zone: "Asia/Tokyo")), at: Self.t0)
        #expect(run.state.schedule.deadline(of: daily.key) == (try RFC3339.parseInstant("2026-12-26T01:00:00Z")), "10:00 Tokyo on the 26th; the 25th excluded")
        try Self.expectRecovers(run)
        // Deleted: the reminder excludes nothing of it any more.
        run.request(.trigger(.deleteCalendar(name: "holidays")), at: Self.t0)
        #expect(run.state.schedule.deadline(of: daily.key) == (try RFC3339.parseInstant("2026-12-25T01:00:00Z")))
        guard case .failed(let missing) = run.request(.trigger(.deleteCalendar(name: "holidays")), at: Self.t0) else {
            Issue.record("deleted twice")
            return
        }
        #expect(missing.code == .notFound)
        try Self.expectRecovers(run)
    }

    @Test func aRegionReminderFiresOncePerCrossingAndOnceWhenItTriggersOnce() throws {
        var run = DurableStateTests.Run { $0.dispatchLead = 0 }
        run.worker(at: Self.t0)
        let arrive = Reminder(
            id: "arrive", recipient: "alice", content: Content(body: "home"),
            trigger: Trigger(start: .instant(Trigger.unstarted), region: RegionTrigger(center: Self.home, radius: 100, notifyOnExit: false)))
        let every = Reminder(
            id: "every", recipient: "alice", content: Content(body: "crossing"),
            trigger: Trigger(start: .instant(Trigger.unstarted), region: RegionTrigger(center: Self.home, radius: 100, triggersOnce: false)))
        run.request(.schedule([arrive, every]), at: Self.t0)
        #expect(run.state.entries[arrive.key]?.state == .pending)
        #expect(run.state.schedule.deadline(of: arrive.key) == nil, "not armed: no time")
        var now = Self.t0
        var firings: [Firing] = []
        func report(_ meters: Double, accuracy: Double = 10) -> LocateResult? {
            now = now.addingTimeInterval(60)
            let outcome = run.request(.trigger(.locate("alice", point: Self.north(meters), accuracy: accuracy, at: now)), at: now)
            let made = DurableStateTests.firings(run.tick(at: now))
            firings += made
            run.worker(acks: made, at: now)
            if case .trigger(.located(let result)) = outcome { return result }
            return nil
        }
        #expect(report(500)?.crossings == [], "the first report determines, crosses nothing")
        let entered = report(20)
        #expect(entered?.crossings.map(\.crossing) == [.entry, .entry])
        #expect(firings.map(\.firingId).sorted() == [
            FiringID(arrive.key, dueAt: now), FiringID(every.key, dueAt: now),
        ].sorted())
        #expect(run.state.entries[arrive.key]?.state == .delivered, "triggersOnce")
        #expect(report(95)?.crossings == [], "jitter at the edge within the accuracy")
        let left = report(300)
        // Every crossing is reported; only those that fire name a firing.
        #expect(left?.crossings.map(\.crossing) == [.exit, .exit])
        #expect(left?.crossings.filter { $0.firingId != nil }.map(\.id) == ["every"], "arrive notifies on entry only")
        #expect(report(30)?.crossings.filter { $0.firingId != nil }.map(\.id) == ["every"], "arrive fired once")
        #expect(firings.count == 4)
        #expect(run.state.entries[every.key]?.state == .pending && run.state.entries[every.key]?.deliveredCount == 3)
        // Out of order and duplicate reports are ignored by time.
        let stale = run.request(.trigger(.locate("alice", point: Self.north(900), accuracy: 0, at: now.addingTimeInterval(-30))), at: now)
        #expect(stale == .trigger(.located(LocateResult(recipient: "alice", accepted: false, crossings: []))))
        let journaled = run.journal.count
        _ = run.request(.trigger(.locate("alice", point: Self.north(900), accuracy: 0, at: now)), at: now)
        #expect(run.journal.count == journaled, "a duplicate is not journaled")
        #expect(run.state.durable.triggers.locations["alice"]?.at == now, "only the last report is kept")
        try Self.expectRecovers(run)
        // A report from the future is refused.
        guard case .failed(let future) = run.request(
            .trigger(.locate("alice", point: Self.home, accuracy: 0, at: now.addingTimeInterval(3600))), at: now)
        else { Issue.record("a future report was taken"); return }
        #expect(future.code == .invalidArgument)
    }

    @Test func aSunReminderAtTheRecipientsPlaceWaitsForItAndMovesWithIt() throws {
        var run = DurableStateTests.Run { $0.dispatchLead = 0 }
        let sunset = Reminder(
            id: "sunset", recipient: "alice", content: Content(body: "sunset"),
            trigger: Trigger(start: .instant(Trigger.unstarted), sun: SolarTrigger(event: .sunset)))
        run.request(.schedule([sunset]), at: Self.t0)
        #expect(run.state.entries[sunset.key]?.state == .pending)
        #expect(run.state.schedule.deadline(of: sunset.key) == nil, "no place yet")
        run.request(.trigger(.locate("alice", point: Self.home, accuracy: 0, at: Self.t0)), at: Self.t0)
        let berlin = try #require(run.state.schedule.deadline(of: sunset.key))
        #expect(RFC3339.format(berlin).hasPrefix("2026-12-24T14:5"), "Berlin's sunset \(berlin)")
        try Self.expectRecovers(run)
        // The recipient flies to Tokyo: the next sunset is Tokyo's.
        let tokyo = GeoPoint(latitude: 35.68, longitude: 139.69)
        run.request(.trigger(.locate("alice", point: tokyo, accuracy: 0, at: Self.t0.addingTimeInterval(60))), at: Self.t0.addingTimeInterval(60))
        let moved = try #require(run.state.schedule.deadline(of: sunset.key))
        #expect(RFC3339.format(moved).hasPrefix("2026-12-25T07:3"), "Tokyo's sunset \(moved)")
        try Self.expectRecovers(run)
    }
}
