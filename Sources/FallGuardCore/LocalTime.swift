#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A time of day on the local clock, to the minute: `09:00`. What the heartbeat's
/// `heartbeat-at` names, and the ends of a daily window such as quiet hours.
public struct LocalTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let hour: Int
    public let minute: Int

    /// nil unless 0...23 and 0...59.
    public init?(hour: Int, minute: Int) {
        guard (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        (self.hour, self.minute) = (hour, minute)
    }

    /// `HH:MM`, two digits each (`09:30`, `23:05`); nil for anything else.
    public init?(parsing text: String) {
        let p = text.split(separator: ":")
        guard p.count == 2, p[0].count == 2, p[1].count == 2,
              let h = Int(p[0]), let m = Int(p[1]) else { return nil }
        self.init(hour: h, minute: m)
    }

    /// Minutes after midnight, 0...1439.
    public var minuteOfDay: Int { hour * 60 + minute }

    /// `09:30`.
    public var description: String { (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)" }

    public static func < (a: LocalTime, b: LocalTime) -> Bool { a.minuteOfDay < b.minuteOfDay }
}

/// A window of every day on the local clock, from `start` up to (not including) `end`; it
/// crosses midnight when `end` comes before `start` (`22:00`–`07:00`); equal ends: empty.
public struct DailyWindow: Sendable, Hashable {
    public var start: LocalTime
    public var end: LocalTime

    public init(start: LocalTime, end: LocalTime) { (self.start, self.end) = (start, end) }

    /// Whether `time` falls in the window.
    public func contains(_ time: LocalTime) -> Bool {
        start <= end ? (start <= time && time < end) : (time >= start || time < end)
    }
}

/// The bridge's own time zone through the C library (the `TZ` variable, else `/etc/localtime`),
/// as its clock shows it. Messages, the heartbeat and the status use it unless a zone is given.
///
/// Foundation's `TimeZone.current` answers the same questions through ICU, whose time-zone and
/// locale data cost the daemon about 3 MB of resident memory for two numbers: the local time
/// and its offset from UTC.
public enum SystemLocalTime {
    private static let initialised: Void = tzset()

    /// The local calendar fields at `t` (seconds since 1970), with `tm_gmtoff` its offset from UTC.
    public static func fields(secondsSince1970 t: Double) -> tm {
        _ = initialised
        var seconds = time_t(t.rounded(.down))
        var out = tm()
        localtime_r(&seconds, &out)
        return out
    }

    /// The local time of day at `t`.
    public static func time(secondsSince1970 t: Double) -> LocalTime {
        let f = fields(secondsSince1970: t)
        return LocalTime(hour: Int(f.tm_hour), minute: Int(f.tm_min)) ?? LocalTime(hour: 0, minute: 0)!
    }

    /// The first instant after `t` at which the local clock shows `time`:00. A time that a
    /// spring-forward change skips comes as the C library's `mktime` resolves it.
    public static func next(_ time: LocalTime, after t: Double) -> Double? {
        for dayOffset in 0..<3 {
            var f = fields(secondsSince1970: t)
            f.tm_mday += Int32(dayOffset)
            f.tm_hour = Int32(time.hour)
            f.tm_min = Int32(time.minute)
            f.tm_sec = 0
            f.tm_isdst = -1   // let mktime decide summer or winter time for that day
            let candidate = mktime(&f)
            guard candidate != -1 else { return nil }
            if Double(candidate) > t { return Double(candidate) }
        }
        return nil
    }

    /// `2026-11-22T14:03:05+0100` at the local offset (`Z` when it is zero).
    public static func iso8601(secondsSince1970 t: Double) -> String {
        FallGuardCore.iso8601(secondsSince1970: t, utcOffset: Int(fields(secondsSince1970: t).tm_gmtoff))
    }
}
