import ChimeCore
import Foundation
import Testing

/// RFC 7529 RSCALE, common cases, through Foundation's (ICU's) calendars: Chinese New Year,
/// a Hebrew date in leap and common years with SKIP, the first of each Islamic month.
@Suite struct ScaledRuleTests {
    static func days(_ rule: String, start: LocalDateTime, zone: String = "UTC", count: Int) throws -> [String] {
        let trigger = Trigger(start: .wallClock(start, zoneIdentifier: zone), scaledRule: try ScaledRule(parsing: rule))
        let recurrence = try trigger.makeRecurrence()
        let timeZone = try ZoneRules.zone(named: zone)
        return recurrence.occurrences(onOrAfter: recurrence.firstInstant, limit: count).map {
            let local = ZoneRules.localDateTime(at: $0.instant, in: timeZone)
            return String(format: "%04d-%02d-%02d %02d:%02d", local.year, local.month, local.day, local.hour, local.minute)
        }
    }

    @Test func chineseNewYearEveryYear() throws {
        let days = try Self.days(
            "RSCALE=CHINESE;FREQ=YEARLY", start: LocalDateTime(year: 2020, month: 1, day: 25, hour: 9), zone: "Asia/Shanghai", count: 7)
        #expect(days == [
            "2020-01-25 09:00", "2021-02-12 09:00", "2022-02-01 09:00", "2023-01-22 09:00", "2024-02-10 09:00",
            "2025-01-29 09:00", "2026-02-17 09:00",
        ])
    }

    @Test func aHebrewLeapMonthDateSkipsOrMovesInCommonYears() throws {
        // 14 Adar I (5L) 5784 = 2024-02-23; 5785 and 5786 are common years, 5787 common, 5790 leap.
        let start = LocalDateTime(year: 2024, month: 2, day: 23, hour: 10)
        let omitted = try Self.days("RSCALE=HEBREW;FREQ=YEARLY;BYMONTH=5L;BYMONTHDAY=14", start: start, count: 2)
        #expect(omitted.first == "2024-02-23 10:00")
        #expect(omitted.count == 2 && omitted[1] > "2026-12-31", "common years have no Adar I: \(omitted)")
        let forward = try Self.days("RSCALE=HEBREW;FREQ=YEARLY;BYMONTH=5L;BYMONTHDAY=14;SKIP=FORWARD", start: start, count: 2)
        #expect(forward == ["2024-02-23 10:00", "2025-03-01 10:00"], "the first of Adar in 5785")
        // Purim, 14 Adar (6): Adar II in leap years.
        let purim = try Self.days("RSCALE=HEBREW;FREQ=YEARLY;BYMONTH=6;BYMONTHDAY=14", start: LocalDateTime(year: 2024, month: 3, day: 24, hour: 8), count: 3)
        #expect(purim == ["2024-03-24 08:00", "2025-03-14 08:00", "2026-03-03 08:00"])
    }

    @Test func theFirstOfEachIslamicMonth() throws {
        let days = try Self.days(
            "RSCALE=ISLAMIC-UMALQURA;FREQ=MONTHLY;BYMONTHDAY=1;COUNT=3", start: LocalDateTime(year: 2026, month: 6, day: 16, hour: 7), count: 5)
        #expect(days.count == 3)
        #expect(days.first == "2026-06-16 07:00")
    }

    @Test func theRuleTextIsStrictAndRoundTrips() throws {
        let rule = try ScaledRule(parsing: "rscale=hebrew;freq=yearly;bymonth=5L;bymonthday=14;skip=forward")
        #expect(rule.description == "RSCALE=HEBREW;FREQ=YEARLY;BYMONTH=5L;BYMONTHDAY=14;SKIP=FORWARD")
        for bad in ["RSCALE=MAYAN;FREQ=YEARLY", "RSCALE=HEBREW;FREQ=DAILY", "RSCALE=HEBREW;FREQ=YEARLY;BYDAY=MO",
                    "RSCALE=HEBREW;FREQ=YEARLY;COUNT=2;UNTIL=20301231T000000Z"] {
            #expect(throws: ValidationError.self, "\(bad)") { try ScaledRule(parsing: bad) }
        }
        let json = #"{"at":"2024-02-23T10:00:00","timeZone":"Asia/Jerusalem","rrule":"RSCALE=HEBREW;FREQ=YEARLY;BYMONTH=5L;BYMONTHDAY=14"}"#
        let trigger = try JSONDecoder().decode(Trigger.self, from: Data(json.utf8))
        #expect(trigger.scaledRule == rule.withoutSkip)
        #expect(try JSONDecoder().decode(Trigger.self, from: JSONEncoder().encode(trigger)) == trigger)
        let reminder = Reminder(id: "purim", recipient: "r", content: Content(), trigger: trigger)
        #expect(try Reminder(binary: reminder.binaryEncoded()) == reminder)
        #expect(try Reminder.binarySummary(in: reminder.binaryEncoded()[...]).isRepeating)
    }
}

extension ScaledRule {
    var withoutSkip: ScaledRule {
        var copy = self
        copy.skip = .omit
        return copy
    }
}
