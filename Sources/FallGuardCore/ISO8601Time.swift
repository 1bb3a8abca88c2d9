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

/// Seconds since 1970 of an RFC 3339 time (`2026-11-22T14:03:05Z`, `…05.250+01:00`,
/// `…05+0100`), the inverse of ``iso8601(secondsSince1970:utcOffset:)``; nil when `text` is not
/// one. Plain arithmetic, as that one: Foundation's `ISO8601DateFormatter` opens ICU, whose code
/// and data cost the station ~6 MB of resident memory (issue 37), and it was made anew for
/// every incident a bridge sent.
public func secondsSince1970(iso8601 text: String) -> Double? {
    let c = Array(text.utf8)
    func number(_ from: Int, _ count: Int) -> Int? {
        guard from + count <= c.count else { return nil }
        var v = 0
        for i in from..<from + count {
            guard (48...57).contains(c[i]) else { return nil }
            v = v * 10 + Int(c[i] - 48)
        }
        return v
    }
    guard c.count >= 20, c[4] == 45, c[7] == 45, c[10] == 84 || c[10] == 116 || c[10] == 32, c[13] == 58, c[16] == 58,
          let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
          let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
          (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
    var i = 19
    var fraction = 0.0
    if c[i] == 46 {   // "."
        var scale = 0.1
        i += 1
        let start = i
        while i < c.count, (48...57).contains(c[i]) {
            fraction += Double(c[i] - 48) * scale
            scale /= 10
            i += 1
        }
        guard i > start else { return nil }
    }
    guard i < c.count else { return nil }
    var offset = 0
    if c[i] == 90 || c[i] == 122 {   // "Z"
        i += 1
    } else if c[i] == 43 || c[i] == 45 {   // "+", "-"
        let sign = c[i] == 45 ? -1 : 1
        guard let h = number(i + 1, 2), h < 24 else { return nil }
        i += 3
        if i < c.count, c[i] == 58 { i += 1 }
        guard let m = number(i, 2), m < 60 else { return nil }
        i += 2
        offset = sign * (h * 3600 + m * 60)
    } else {
        return nil
    }
    guard i == c.count else { return nil }
    // Days from 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    return Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
}

/// Whether `a` comes before `b` in the order people read names in (`room-2` before `room-10`):
/// runs of digits by their value, the rest by character without case; names equal so
/// (`room-2`, `Room-02`) by their characters. What `localizedStandardCompare` does for device names, without ICU's collator
/// (its code and data cost the station ~6 MB of resident memory: issue 37).
public func naturalOrder(_ a: String, _ b: String) -> Bool {
    var x = a.lowercased().unicodeScalars[...], y = b.lowercased().unicodeScalars[...]
    func digits(_ s: inout Substring.UnicodeScalarView) -> Substring.UnicodeScalarView {
        let run = s.prefix { ("0"..."9").contains($0) }
        s = s.dropFirst(run.count)
        return run
    }
    while let p = x.first, let q = y.first {
        if ("0"..."9").contains(p), ("0"..."9").contains(q) {
            let m = digits(&x), n = digits(&y)
            let mv = m.drop { $0 == "0" }, nv = n.drop { $0 == "0" }
            if mv.count != nv.count { return mv.count < nv.count }
            if !mv.elementsEqual(nv) { return mv.lexicographicallyPrecedes(nv) }
            continue
        }
        if p != q { return p.value < q.value }
        x.removeFirst()
        y.removeFirst()
    }
    if x.isEmpty != y.isEmpty { return x.isEmpty }
    return a < b   // equal without case: a stable tie-break
}
