/// The one offline loop over a fall detector: what `evaluate` (trials and continuous
/// recordings), `cross-validate`, `report`, `replay` and the incident archive's evaluation run a
/// detector with. Only the live `SensorPipeline` (driven by the daemon's `SensorLoop`) has a
/// loop of its own.
///
/// A recording goes through the bridge's 40 Hz ``Resampler`` at its own rate
/// (``Resampler/rate(of:)``, as a replay announces it), and the detector starts afresh after
/// every gap the resampler does not bridge (longer than 0.25 s), so that no window spans
/// missing data. A 40 Hz recording with regular times (every trial of the dev folders) reaches
/// the detector unchanged. Samples are handed on as they are: whatever an
/// ``AccelerationSample`` carries, the resampler passes on, the detector sees.
public enum DetectorRunner {
    /// Runs `detector` over `samples` and returns its detections in order. The detector is left
    /// as the stream ended it: a decision still due is its ``FallDetector/openDecision``.
    /// - Parameters:
    ///   - rate: the recording's rate in Hz, when the caller already has it (cross-validation
    ///     runs each recording once per grid point); by default ``Resampler/rate(of:)``.
    ///     A rate the resampler cannot take (``Resampler/rates``) gives no detections.
    ///   - stopAtFirst: stop at the first detection (cross-validation only asks whether a
    ///     trial alarmed).
    ///   - observe: sees every 40 Hz sample before the detector does, with `true` for the first
    ///     one after a gap (the wearer-activity tallies of `evaluate`).
    ///   - countdown: the alarm's countdown, in seconds: each detection is followed by a
    ///     ``RecoveryWatch`` for that long after its decision (or to the end of the recording,
    ///     or a gap), as the bridge does, and carries ``FallSuspected/recoveredAfter`` when the
    ///     wearer was up again in it. Nil: no watch (`stopAtFirst` runs).
    public static func detections<D: FallDetector>(
        in samples: [AccelerationSample], by detector: inout D, rate: Double? = nil, stopAtFirst: Bool = false,
        countdown: Double? = RecoveryWatch.countdown,
        observe: ((AccelerationSample, _ afterGap: Bool) -> Void)? = nil
    ) -> [FallSuspected] {
        guard var resampler = try? Resampler(inputRate: rate ?? Resampler.rate(of: samples)) else { return [] }
        var found: [FallSuspected] = []
        var watches: [(index: Int, watch: RecoveryWatch, until: Double)] = []
        var gaps = 0
        let gyroscope = detector.readsGyroscope
        var out: [AccelerationSample] = []
        for s in samples {
            out.removeAll(keepingCapacity: true)
            resampler.process(s) { out.append($0) }
            var afterGap = false
            if resampler.gaps != gaps { gaps = resampler.gaps; detector.reset(); afterGap = true; watches.removeAll() }
            for r in out {
                observe?(r, afterGap)
                afterGap = false
                if !watches.isEmpty {
                    watches.removeAll { w in r.time > w.until }
                    let seen = gyroscope ? r : r.accelerometerOnly   // what the detector sees
                    for i in watches.indices where watches[i].watch.process(seen) {
                        found[watches[i].index].recoveredAfter = watches[i].watch.upAfter
                    }
                    watches.removeAll { found[$0.index].recoveredAfter != nil }
                }
                if let d = detector.process(r) {
                    found.append(d)
                    if stopAtFirst { return found }
                    if let countdown, let w = RecoveryWatch(after: d) {
                        watches.append((found.count - 1, w, r.time + countdown))
                    }
                }
            }
        }
        return found
    }

    /// The same with a fresh detector made from `configuration`.
    public static func detections(
        in samples: [AccelerationSample], configuration: DetectorConfiguration, stopAtFirst: Bool = false,
        countdown: Double? = RecoveryWatch.countdown,
        observe: ((AccelerationSample, _ afterGap: Bool) -> Void)? = nil
    ) -> [FallSuspected] {
        var detector = configuration.makeDetector()
        return detections(in: samples, by: &detector, stopAtFirst: stopAtFirst, countdown: countdown, observe: observe)
    }
}
