/// Feeds recorded samples through a detector and collects every detection.
public func detectFalls<D: FallDetector>(in samples: [AccelerationSample], using detector: inout D) -> [FallSuspected] {
    var found: [FallSuspected] = []
    for s in samples {
        if let d = detector.process(s) { found.append(d) }
    }
    return found
}

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
