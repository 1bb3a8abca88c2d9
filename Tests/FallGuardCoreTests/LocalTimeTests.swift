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

    @Test func aDailyWindowMayCrossMidnight() {
        func t(_ s: String) -> LocalTime { LocalTime(parsing: s)! }
        let night = DailyWindow(start: t("22:00"), end: t("07:00"))
        for inside in ["22:00", "23:59", "00:00", "06:59"] { #expect(night.contains(t(inside)), "\(inside)") }
        for outside in ["07:00", "12:00", "21:59"] { #expect(!night.contains(t(outside)), "\(outside)") }
        let lunch = DailyWindow(start: t("12:00"), end: t("13:00"))
        #expect(lunch.contains(t("12:30")))
        for outside in ["13:00", "11:59", "00:00"] { #expect(!lunch.contains(t(outside)), "\(outside)") }
        #expect(!DailyWindow(start: t("08:00"), end: t("08:00")).contains(t("08:00")))
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
