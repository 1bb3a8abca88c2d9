/// Time of the largest magnitude in a recording: the reference impact of a fall trial,
/// from which detection delay is measured.
public func peakMagnitudeTime(_ samples: [AccelerationSample]) -> Double? {
    var best = -1.0
    var time: Double?
    for s in samples {
        let m = s.magnitude
        if m > best {
            best = m
            time = s.time
        }
    }
    return time
}
