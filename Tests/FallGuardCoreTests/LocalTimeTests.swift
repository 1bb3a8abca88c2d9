import FallGuardCore
import Testing

@Suite("Local time of day")
struct LocalTimeTests {
    @Test func hhmmIsReadAndWritten() throws {
        let t = try #require(LocalTime(parsing: "09:30"))
        #expect(t.hour == 9 && t.minute == 30 && t.minuteOfDay == 570 && t.description == "09:30")
        #expect(LocalTime(parsing: "23:59")?.minuteOfDay == 23 * 60 + 59)
        #expect(LocalTime(parsing: "00:00")?.description == "00:00")
        for bad in ["9:30", "24:00", "12:60", "12:5", "noon", "", "12:30:00", "-1:00"] {
            #expect(LocalTime(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func aDailyWindowMayCrossMidnight() throws {
        func t(_ s: String) throws -> LocalTime { try #require(LocalTime(parsing: s)) }
        let night = DailyWindow(start: try t("22:00"), end: try t("07:00"))
        #expect(night.contains(try t("22:00")) && night.contains(try t("23:59")) && night.contains(try t("00:00")))
        #expect(night.contains(try t("06:59")) && !night.contains(try t("07:00")) && !night.contains(try t("12:00")))
        let lunch = DailyWindow(start: try t("12:00"), end: try t("13:00"))
        #expect(lunch.contains(try t("12:30")) && !lunch.contains(try t("13:00")) && !lunch.contains(try t("11:59")))
        #expect(!DailyWindow(start: try t("08:00"), end: try t("08:00")).contains(try t("08:00")))
    }

    /// The next 09:30 on the local clock, here in UTC (the tests' TZ is not set to a zone with changes).
    @Test func theNextTimeOfDayIsWithinADay() throws {
        let t = try #require(LocalTime(parsing: "09:30"))
        let now = 1_795_000_000.0
        let next = try #require(SystemLocalTime.next(t, after: now))
        #expect(next > now && next - now <= 25 * 3600)
        #expect(SystemLocalTime.time(secondsSince1970: next) == t)
    }
}
