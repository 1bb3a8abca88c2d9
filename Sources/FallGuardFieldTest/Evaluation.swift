import Dispatch
import FallGuardCore
import Synchronization

/// What one detector did on one labelled trial.
public struct TrialOutcome: Sendable {
    public var trial: LabelledTrial
    public var duration: Double
    public var detections: [FallSuspected]
    /// Time of the largest magnitude: the reference impact for fall trials.
    public var referenceImpact: Double

    public init(trial: LabelledTrial, duration: Double, detections: [FallSuspected], referenceImpact: Double) {
        self.trial = trial
        self.duration = duration
        self.detections = detections
        self.referenceImpact = referenceImpact
    }

    public var alarmed: Bool { !detections.isEmpty }
    /// For a detected fall: seconds from the reference impact to the first decision.
    public var delay: Double? {
        guard trial.label.kind == .fall, let first = detections.first else { return nil }
        return first.decisionTime - referenceImpact
    }
}

/// Scores of a detector on a labelled dataset, at trial level.
public struct Evaluation: Sendable {
    public var detector: String
    public var outcomes: [TrialOutcome]
    public var skipped: [RecordingFileError]

    public init(detector: String, outcomes: [TrialOutcome], skipped: [RecordingFileError]) {
        self.detector = detector
        self.outcomes = outcomes
        self.skipped = skipped
    }

    public var scores: Scores { Scores(outcomes) }

    /// Per activity code, in code order.
    public var byCode: [(code: String, scores: Scores)] {
        Dictionary(grouping: outcomes, by: \.trial.label.code)
            .sorted { $0.key < $1.key }
            .map { ($0.key, Scores($0.value)) }
    }
}

/// Trial-level figures for a set of outcomes.
public struct Scores: Sendable, Equatable {
    public var falls = 0
    public var detectedFalls = 0
    public var adls = 0
    public var alarmedADLs = 0
    /// Every detection in ADL trials (a trial may have more than one).
    public var falseAlarms = 0
    public var adlHours = 0.0
    /// Fall trials whose first detection is more than 3 s away from the reference impact.
    public var fallsDetectedOffImpact = 0
    /// Sorted delays from reference impact to decision, for detected falls.
    public var delays: [Double] = []

    public init(_ outcomes: [TrialOutcome]) {
        for o in outcomes {
            switch o.trial.label.kind {
            case .fall:
                falls += 1
                if let first = o.detections.first {
                    detectedFalls += 1
                    if abs(first.impactTime - o.referenceImpact) > 3 { fallsDetectedOffImpact += 1 }
                }
                if let d = o.delay { delays.append(d) }
            case .adl:
                adls += 1
                adlHours += o.duration / 3600
                if o.alarmed { alarmedADLs += 1 }
                falseAlarms += o.detections.count
            }
        }
        delays.sort()
    }

    /// Percent of fall trials detected (nil without fall trials).
    public var sensitivity: Double? { falls == 0 ? nil : 100 * Double(detectedFalls) / Double(falls) }
    /// Percent of ADL trials without any alarm (nil without ADL trials).
    public var specificity: Double? { adls == 0 ? nil : 100 * Double(adls - alarmedADLs) / Double(adls) }
    /// Percent of trials classified correctly.
    public var accuracy: Double? {
        let n = falls + adls
        return n == 0 ? nil : 100 * Double(detectedFalls + adls - alarmedADLs) / Double(n)
    }
    public var falseAlarmsPerHour: Double? { adlHours > 0 ? Double(falseAlarms) / adlHours : nil }

    /// The q-quantile (0...1) of the detection delays, nearest rank.
    public func delayQuantile(_ q: Double) -> Double? {
        guard !delays.isEmpty else { return nil }
        let rank = Int((q * Double(delays.count)).rounded(.up))
        return delays[min(max(rank, 1), delays.count) - 1]
    }
}

public enum Evaluator {
    /// Reads every trial and runs a fresh detector over each, on `threads` threads.
    ///
    /// A file that cannot be read stops the evaluation with its error, unless `skipBad`,
    /// in which case it is listed in ``Evaluation/skipped``.
    public static func evaluate(
        _ dataset: Dataset, configuration: DetectorConfiguration, skipBad: Bool = false, threads: Int = 2
    ) throws(RecordingFileError) -> Evaluation {
        let trials = dataset.trials
        let results = parallelMap(trials.count, threads: threads, state: [UInt8]()) { buffer, i -> Result<TrialOutcome, RecordingFileError> in
            Result { () throws(RecordingFileError) -> TrialOutcome in
                let rec = try RecordingFile.read(path: trials[i].path, reusing: &buffer)
                return outcome(of: trials[i], recording: rec, configuration: configuration)
            }
        }
        var outcomes: [TrialOutcome] = []
        var skipped: [RecordingFileError] = []
        outcomes.reserveCapacity(results.count)
        for r in results {
            switch r {
            case .success(let o): outcomes.append(o)
            case .failure(let e):
                if !skipBad { throw e }
                skipped.append(e)
            }
        }
        return Evaluation(detector: configuration.label, outcomes: outcomes, skipped: skipped)
    }

    /// Runs a fresh detector over one recording.
    public static func outcome(of trial: LabelledTrial, recording: Recording, configuration: DetectorConfiguration) -> TrialOutcome {
        var detector = configuration.makeDetector()
        let detections = detectFalls(in: recording.samples, using: &detector)
        return TrialOutcome(
            trial: trial, duration: recording.duration, detections: detections,
            referenceImpact: peakMagnitudeTime(recording.samples) ?? 0)
    }
}

/// `body` over `0..<count` on `threads` threads, results in index order. Each thread gets its
/// own copy of `state` (scratch space reused across the items it takes).
public func parallelMap<S: Sendable, T: Sendable>(
    _ count: Int, threads: Int, state: S, _ body: @Sendable (inout S, Int) -> T
) -> [T] {
    let results = Mutex<[T?]>(Array(repeating: nil, count: count))
    let next = Atomic<Int>(0)
    DispatchQueue.concurrentPerform(iterations: max(1, min(threads, count))) { _ in
        var local = state
        while true {
            let (i, _) = next.add(1, ordering: .relaxed)
            guard i < count else { break }
            let r = body(&local, i)
            results.withLock { $0[i] = r }
        }
    }
    return results.withLock { $0.map { $0! } }
}
