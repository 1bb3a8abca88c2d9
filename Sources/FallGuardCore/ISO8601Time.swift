/// An instant as ISO 8601 text, `2026-11-22T14:03:05+0100`, shown at a UTC offset in seconds;
/// `Z` when the offset is zero, as Foundation's `Date.ISO8601FormatStyle` writes it by default.
/// Whole seconds (fractions are dropped).
///
/// Plain arithmetic (days to a proleptic Gregorian date, after Howard Hinnant's
/// `civil_from_days`): Foundation's ISO 8601 style reaches ICU's time-zone data for the same
/// text, and opening that data costs the bridge more than a megabyte of memory.
public func iso8601(secondsSince1970 t: Double, utcOffset: Int = 0) -> String {
    let (year, month, day, secondOfDay, _) = civil(Int(t.rounded(.down)) + utcOffset)
    let zone = utcOffset == 0
        ? "Z" : (utcOffset < 0 ? "-" : "+") + pad(abs(utcOffset) / 3600) + pad(abs(utcOffset) % 3600 / 60)
    return "\(pad(year, 4))-\(pad(month))-\(pad(day))T\(pad(secondOfDay / 3600)):\(pad(secondOfDay % 3600 / 60)):\(pad(secondOfDay % 60))"
        + zone
}

/// An instant as an HTTP date (RFC 9110's IMF-fixdate, always GMT): `Thu, 26 Nov 2026 22:10:05 GMT`.
public func httpDate(secondsSince1970 t: Int) -> String {
    let (year, month, day, secondOfDay, weekday) = civil(t)
    let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    return "\(days[weekday]), \(pad(day)) \(months[month - 1]) \(pad(year, 4)) "
        + "\(pad(secondOfDay / 3600)):\(pad(secondOfDay % 3600 / 60)):\(pad(secondOfDay % 60)) GMT"
}

/// Seconds since 1970 (at some UTC offset already added) as a proleptic Gregorian date, the
/// second of that day and its weekday (0 Sunday).
private func civil(_ s: Int) -> (year: Int, month: Int, day: Int, secondOfDay: Int, weekday: Int) {
    let days = s >= 0 ? s / 86_400 : (s - 86_399) / 86_400
    let secondOfDay = s - days * 86_400
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    let weekday = ((days % 7) + 11) % 7   // 1970-01-01 was a Thursday
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day, secondOfDay, weekday)
}

private func pad(_ v: Int, _ width: Int = 2) -> String {
    let digits = String(v)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
