import FallGuardCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The bridge's own time zone through the C library (the `TZ` variable, else `/etc/localtime`),
/// as its clock shows it. Messages and the heartbeat use it unless a `TimeZone` is given.
///
/// Foundation's `TimeZone.current` answers the same questions through ICU, whose time-zone and
/// locale data cost the daemon about 3 MB of resident memory for two numbers: the local time
/// and its offset from UTC.
public enum SystemLocalTime {
    private static let initialised: Void = tzset()

    /// The local calendar fields at `date`, with `tm_gmtoff` its offset from UTC in seconds.
    static func fields(_ date: Date) -> tm {
        _ = initialised
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var out = tm()
        localtime_r(&seconds, &out)
        return out
    }

    /// The first instant after `date` at which the local clock shows `hour`:`minute`:00. A time
    /// that a spring-forward change skips comes as the C library's `mktime` resolves it.
    static func next(hour: Int, minute: Int, after date: Date) -> Date? {
        for dayOffset in 0..<3 {
            var t = fields(date)
            t.tm_mday += Int32(dayOffset)
            t.tm_hour = Int32(hour)
            t.tm_min = Int32(minute)
            t.tm_sec = 0
            t.tm_isdst = -1   // let mktime decide summer or winter time for that day
            let candidate = mktime(&t)
            guard candidate != -1 else { return nil }
            if Double(candidate) > date.timeIntervalSince1970 { return Date(timeIntervalSince1970: Double(candidate)) }
        }
        return nil
    }

    /// `2026-11-22T14:03:05+0100` at the local offset (`Z` when it is zero).
    public static func iso8601(_ date: Date) -> String {
        FallGuardCore.iso8601(secondsSince1970: date.timeIntervalSince1970, utcOffset: Int(fields(date).tm_gmtoff))
    }
}
