import ChimeCore
import Foundation
import Testing

/// ChimeCore's solar times against the reference table that `astral` (NOAA's algorithm) made:
/// Tests/Fixtures/solar/solar_reference.json (written by make_reference.py beside it), places
/// from 66°S to 66°N over 2020–2031. Every event within a minute; a day astral has no event
/// on (polar day or night) has none here either.
@Suite struct SolarReferenceTests {
    struct Table: Decodable {
        var places: [String: [Double]]
        var depressions: [String: Double]
        var rows: [Row]
    }

    struct Row: Decodable {
        var place: String
        var date: String
        var event: String
        var utc: String?
        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            place = try container.decode(String.self)
            date = try container.decode(String.self)
            event = try container.decode(String.self)
            utc = try container.decodeIfPresent(String.self)
        }
    }

    static func table() throws -> Table {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/solar/solar_reference.json")
        return try JSONDecoder().decode(Table.self, from: Data(contentsOf: url))
    }

    @Test func everyEventIsWithinAMinuteOfTheReference() throws {
        let table = try Self.table()
        var worst = 0.0
        var compared = 0
        for row in table.rows {
            guard let coordinates = table.places[row.place], let event = SolarTrigger.Event(rawValue: row.event) else {
                Issue.record("row \(row.place) \(row.event) names nothing known")
                continue
            }
            let place = GeoPoint(latitude: coordinates[0], longitude: coordinates[1])
            let trigger = SolarTrigger(event: event, depression: table.depressions[row.event] ?? SolarTrigger.civil)
            let dayStart = try RFC3339.parseInstant(row.date + "T00:00:00Z")
            let day = Int(dayStart.timeIntervalSince1970 / 86_400)
            // The event on this UTC date, whichever solar day it is computed for.
            let candidates = (day - 1...day + 1).compactMap { trigger.instant(onDay: $0, at: place) }
                .filter { $0 >= dayStart && $0 < dayStart.addingTimeInterval(86_400) }
            // On the day the sun starts or stops reaching the zenith, it grazes it at solar
            // midnight: which of two adjacent days has the event is a matter of seconds.
            func isGrazing(_ instant: Date) -> Bool {
                let midnight = SolarCalculator.noon(day: day, longitude: place.longitude) * 60 - 43_200
                let seconds = instant.timeIntervalSince(dayStart)
                return [midnight - 86_400, midnight, midnight + 86_400].contains { abs(seconds - $0) < 45 * 60 }
            }
            guard let utc = row.utc else {
                #expect(candidates.allSatisfy(isGrazing), "\(row.place) \(row.date) \(row.event): astral has none, Chime \(candidates)")
                continue
            }
            let expected = try RFC3339.parseInstant(utc)
            guard let nearest = candidates.min(by: { abs($0.timeIntervalSince(expected)) < abs($1.timeIntervalSince(expected)) }) else {
                // Where the event drifts across 0h UTC, astral's wrapping into the asked date
                // can name the neighbouring day's event (dawn at 66°N in August: 23:58 on the
                // 4th, 00:07 on the 6th, none on the 5th; astral says 00:07:01 on the 5th).
                let neighbours = (day - 2...day + 2).compactMap { trigger.instant(onDay: $0, at: place) }
                let shifted = neighbours.contains { abs(abs($0.timeIntervalSince(expected)) - 86_400) <= 60 }
                #expect(isGrazing(expected) || shifted, "\(row.place) \(row.date) \(row.event): astral \(utc), Chime none")
                continue
            }
            let difference = abs(nearest.timeIntervalSince(expected))
            worst = max(worst, difference)
            compared += 1
            #expect(difference <= 60, "\(row.place) \(row.date) \(row.event): astral \(utc), Chime \(RFC3339.format(nearest))")
        }
        #expect(compared > 9_000)
        print("solar reference: \(compared) events, worst difference \(worst) s")
    }

    @Test func polarDayHasNoSunriseAndTheSeriesSkipsToTheNextDayWithOne() throws {
        // 78°N (Longyearbyen) in June: no sunrise; the daily series goes on in late August.
        let place = GeoPoint(latitude: 78.22, longitude: 15.65)
        let sunrise = SolarTrigger(event: .sunrise, place: place)
        let june = try RFC3339.parseInstant("2026-06-21T00:00:00Z")
        #expect(sunrise.instant(onDay: Int(june.timeIntervalSince1970 / 86_400), at: place) == nil)
        let trigger = Trigger(start: .instant(june), sun: sunrise)
        let next = try trigger.makeRecurrence().firstOccurrence(onOrAfter: june)
        let found = try #require(next)
        #expect(found.instant > (try RFC3339.parseInstant("2026-08-15T00:00:00Z")))
        #expect(found.instant < (try RFC3339.parseInstant("2026-09-01T00:00:00Z")))
        // Solar noon happens every day, polar day or not.
        let noon = Trigger(start: .instant(june), sun: SolarTrigger(event: .noon, place: place))
        let noons = try noon.makeRecurrence().occurrences(onOrAfter: june, limit: 3)
        #expect(noons.count == 3)
        #expect(noons.map(\.index) == [20625, 20626, 20627])
    }

    @Test func anOffsetAndTheRecipientsPlaceShapeTheSeries() throws {
        let berlin = GeoPoint(latitude: 52.52, longitude: 13.405)
        let start = try RFC3339.parseInstant("2026-12-24T00:00:00Z")
        let sunset = SolarTrigger(event: .sunset, offset: -1800)
        let trigger = Trigger(start: .instant(start), sun: sunset)
        // No place of its own and none given: no occurrence until the recipient reports one.
        #expect(try trigger.makeRecurrence().firstOccurrence(onOrAfter: start) == nil)
        let recurrence = try trigger.makeRecurrence(place: berlin, exclusion: nil)
        let first = try #require(recurrence.firstOccurrence(onOrAfter: start))
        let plain = try #require(SolarTrigger(event: .sunset).instant(onDay: first.index, at: berlin))
        #expect(first.instant == plain.addingTimeInterval(-1800))
        #expect(RFC3339.format(first.instant).hasPrefix("2026-12-24T14:"))
    }

    @Test func theJSONShapeIsStrictAndRoundTrips() throws {
        let json = #"{"sun":{"event":"dusk","depression":"nautical","offset":"-15m","latitude":52.52,"longitude":13.405}}"#
        let trigger = try JSONDecoder().decode(Trigger.self, from: Data(json.utf8))
        #expect(trigger.sun == SolarTrigger(event: .dusk, depression: 12, offset: -900, place: GeoPoint(latitude: 52.52, longitude: 13.405)))
        #expect(trigger.start == .instant(Trigger.unstarted))
        let again = try JSONDecoder().decode(Trigger.self, from: try JSONEncoder().encode(trigger))
        #expect(again == trigger)
        #expect(!String(decoding: try JSONEncoder().encode(trigger), as: UTF8.self).contains("\"at\""))
        for bad in [
            #"{"sun":{"event":"moonrise"}}"#, #"{"sun":{"event":"dusk","latitude":52}}"#,
            #"{"sun":{"event":"dusk","colour":1}}"#,
        ] {
            #expect(throws: (any Error).self) { try JSONDecoder().decode(Trigger.self, from: Data(bad.utf8)) }
        }
        #expect(throws: ValidationError.self) {
            try Trigger(start: .instant(Trigger.unstarted), repeatRule: RepeatRule(unit: .day, interval: 1), sun: SolarTrigger(event: .noon)).makeRecurrence()
        }
        #expect(throws: ValidationError.self) {
            try Trigger(start: .instant(Trigger.unstarted), sun: SolarTrigger(event: .noon, offset: 50_000)).makeRecurrence()
        }
        let reminder = Reminder(id: "s", recipient: "r", content: Content(), trigger: trigger)
        #expect(try Reminder(binary: reminder.binaryEncoded()) == reminder)
        #expect(try Reminder.binarySummary(in: reminder.binaryEncoded()[...]).isRepeating)
    }
}
