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
    /// Set when the recording ended, with nothing detected, while the detector still had a
    /// decision due (e.g. a long look after a soft impact): the trial is too short to judge and
    /// is counted apart, neither detected nor missed.
    public var undecided: OpenDecision?

    public init(trial: LabelledTrial, duration: Double, detections: [FallSuspected], referenceImpact: Double,
                undecided: OpenDecision? = nil) {
        self.trial = trial
        self.duration = duration
        self.detections = detections
        self.referenceImpact = referenceImpact
        self.undecided = detections.isEmpty ? undecided : nil
    }

    /// A detection whose wearer stayed down: the countdown would have ended in an alarm.
    public var alarmed: Bool { detections.contains { $0.recoveredAfter == nil } }
    /// Detections only of falls the wearer got up from within the countdown: told as a
    /// recovered fall (information), no alarm.
    public var recoveredOnly: Bool { !detections.isEmpty && !alarmed }
    public var tooShort: Bool { undecided != nil }
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
    /// What the dataset's codes mean (``Dataset/codeNames``).
    public var codeNames: [String: String] = [:]

    public init(detector: String, outcomes: [TrialOutcome], skipped: [RecordingFileError]) {
        (self.detector, self.outcomes, self.skipped) = (detector, outcomes, skipped)
    }

    public var scores: Scores { Scores(outcomes) }

    /// Per activity code, in code order.
    public var byCode: [(code: String, scores: Scores)] {
        Dictionary(grouping: outcomes, by: \.trial.label.code)
            .sorted { $0.key < $1.key }
            .map { ($0.key, Scores($0.value)) }
    }

    /// Per population, in the order the populations are defined; only populations with trials.
    public func byPopulation(_ populations: Populations) -> [(population: String, scores: Scores)] {
        let groups = Dictionary(grouping: outcomes) { populations.name(of: $0.trial.label.subject) }
        return populations.names(for: outcomes.map(\.trial.label.subject)).compactMap { name in
            groups[name].map { (name, Scores($0)) }
        }
    }

    /// Per population, only the trials whose codes are in `codes` (e.g. the falls closest to an
    /// older person's: F10, F13).
    public func byPopulation(_ populations: Populations, codes: Set<String>) -> [(population: String, scores: Scores)] {
        Evaluation(detector: detector, outcomes: outcomes.filter { codes.contains($0.trial.label.code) }, skipped: [])
            .byPopulation(populations)
    }
}

/// Named groups of subjects for reporting, e.g. `young` = `SA*` and `older` = `SE*`.
///
/// Each rule is a name and subject patterns: a pattern is a subject id, or a prefix followed by
/// `*`. The first rule that matches names a subject. Without rules (or for a subject no rule
/// matches) a subject belongs to the population of its id without the trailing digits: `SA07`
/// to `SA`, `SE03` to `SE`.
public struct Populations: Sendable, Equatable {
    public struct Rule: Sendable, Equatable {
        public var name: String
        public var patterns: [String]
        public init(name: String, patterns: [String]) { (self.name, self.patterns) = (name, patterns) }
    }
    public var rules: [Rule]

    public init(rules: [Rule] = []) { self.rules = rules }

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case malformed(line: Int, text: String)
        public var description: String {
            switch self {
            case let .malformed(line, text):
                return "line \(line): '\(text)' is not of the form NAME PATTERN... (e.g. older SE*)"
            }
        }
    }

    /// `name=pattern,pattern` (as `--population` takes it).
    public static func rule(_ spec: String) -> Rule? {
        guard let eq = spec.firstIndex(of: "=") else { return nil }
        let name = String(spec[..<eq])
        let patterns = spec[spec.index(after: eq)...].split(separator: ",").map(String.init)
        guard !name.isEmpty, !patterns.isEmpty, !patterns.contains(where: \.isEmpty) else { return nil }
        return Rule(name: name, patterns: patterns)
    }

    /// A subjects file: one population per line, `NAME PATTERN...`, blank lines and `#` comments ignored.
    public static func parse(_ text: String) throws(ParseError) -> Populations {
        var rules: [Rule] = []
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "," }).map(String.init)
            guard !words.isEmpty else { continue }
            guard words.count >= 2 else { throw .malformed(line: i + 1, text: String(raw)) }
            rules.append(Rule(name: words[0], patterns: Array(words.dropFirst())))
        }
        return Populations(rules: rules)
    }

    public func name(of subject: String) -> String {
        for r in rules where r.patterns.contains(where: { Self.matches(subject, $0) }) { return r.name }
        let stem = subject.reversed().drop(while: { $0 >= "0" && $0 <= "9" }).reversed()
        return stem.isEmpty ? subject : String(stem)
    }

    /// The populations of these subjects: the rules' names in their order, then the others sorted.
    public func names(for subjects: [String]) -> [String] {
        let present = Set(subjects.map(name(of:)))
        let ruled = rules.map(\.name).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        return ruled.filter(present.contains) + present.subtracting(ruled).sorted()
    }

    static func matches(_ subject: String, _ pattern: String) -> Bool {
        pattern.hasSuffix("*") ? subject.hasPrefix(pattern.dropLast()) : subject == pattern
    }
}

/// Falls, how many of them a detector found and how long its decisions took: the part that
/// trial-level (``Scores``: fall trials) and event-level (``EventScores``: labelled falls in
/// continuous recordings) scoring share.
public struct FallTally: Sendable, Equatable {
    public var falls = 0
    public var detected = 0
    /// Sorted seconds from the reference impact to the decision, for detected falls.
    public var delays: [Double] = []

    /// Percent of the falls detected (nil without falls).
    public var sensitivity: Double? { falls == 0 ? nil : 100 * Double(detected) / Double(falls) }

    /// The q-quantile (0...1) of the delays, nearest rank.
    public func delayQuantile(_ q: Double) -> Double? {
        guard !delays.isEmpty else { return nil }
        let rank = Int((q * Double(delays.count)).rounded(.up))
        return delays[min(max(rank, 1), delays.count) - 1]
    }
}

/// Trial-level figures for a set of outcomes.
public struct Scores: Sendable, Equatable {
    /// The fall trials, those detected and the delays to their decisions.
    public var fallTally = FallTally()
    public var adls = 0
    public var alarmedADLs = 0
    /// Fall trials detected only as recovered falls (the wearer was up again within the
    /// countdown): counted in ``fallTally``'s `detected`.
    public var recoveredFalls = 0
    /// ADL trials whose only detections were recovered falls: no alarm, but the policy's
    /// recovered-fall contacts would be told. Not in ``alarmedADLs``.
    public var recoveredADLs = 0
    /// Every detection in ADL trials that would have alarmed (a trial may have more than one).
    public var falseAlarms = 0
    /// Every recovered-fall detection in ADL trials.
    public var recoveredReports = 0
    /// Trials that ended while a decision was still due; not in the counts above.
    public var tooShortFalls = 0
    public var tooShortADLs = 0
    public var adlHours = 0.0
    /// Fall trials whose first detection is more than 3 s away from the reference impact.
    public var fallsDetectedOffImpact = 0

    public init(_ outcomes: [TrialOutcome]) {
        for o in outcomes {
            if o.tooShort {
                if o.trial.label.kind == .fall { tooShortFalls += 1 } else { tooShortADLs += 1 }
                continue
            }
            switch o.trial.label.kind {
            case .fall:
                fallTally.falls += 1
                if let first = o.detections.first {
                    fallTally.detected += 1
                    if o.recoveredOnly { recoveredFalls += 1 }
                    if abs(first.impactTime - o.referenceImpact) > 3 { fallsDetectedOffImpact += 1 }
                }
                if let d = o.delay { fallTally.delays.append(d) }
            case .adl:
                adls += 1
                adlHours += o.duration / 3600
                if o.alarmed { alarmedADLs += 1 }
                if o.recoveredOnly { recoveredADLs += 1 }
                falseAlarms += o.detections.count { $0.recoveredAfter == nil }
                recoveredReports += o.detections.count { $0.recoveredAfter != nil }
            }
        }
        fallTally.delays.sort()
    }

    public var tooShort: Int { tooShortFalls + tooShortADLs }

    /// Percent of fall trials detected (nil without fall trials).
    public var sensitivity: Double? { fallTally.sensitivity }
    /// Percent of ADL trials without any alarm (nil without ADL trials).
    public var specificity: Double? { adls == 0 ? nil : 100 * Double(adls - alarmedADLs) / Double(adls) }
    /// Percent of trials classified correctly.
    public var accuracy: Double? {
        let n = fallTally.falls + adls
        return n == 0 ? nil : 100 * Double(fallTally.detected + adls - alarmedADLs) / Double(n)
    }
    public var falseAlarmsPerHour: Double? { adlHours > 0 ? Double(falseAlarms) / adlHours : nil }
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
        // The wearer's upright, as a device worn for days has learned it: from the walking in the
        // subject's other recordings (a file that cannot be read adds nothing; it fails below).
        let walked = parallelMap(trials.count, threads: threads, state: [UInt8]()) { buffer, i -> UprightLearner in
            (try? RecordingFile.read(path: trials[i].path, reusing: &buffer)).map { SubjectUpright.learner($0.samples) } ?? UprightLearner()
        }
        let uprights = SubjectUpright.uprights(subjects: trials.map(\.label.subject), learners: walked)
        let results = parallelMap(trials.count, threads: threads, state: [UInt8]()) { buffer, i -> Result<TrialOutcome, RecordingFileError> in
            Result { () throws(RecordingFileError) -> TrialOutcome in
                let rec = try RecordingFile.read(path: trials[i].path, reusing: &buffer)
                return outcome(of: trials[i], recording: rec, configuration: configuration, upright: uprights[i])
            }
        }
        let (outcomes, skipped) = try gather(results, skipBad: skipBad)
        var e = Evaluation(detector: configuration.label, outcomes: outcomes, skipped: skipped)
        e.codeNames = dataset.codeNames
        return e
    }

    /// Runs a fresh detector over one recording (``DetectorRunner``), with the wearer's learned
    /// `upright` if known (``SubjectUpright``).
    public static func outcome(of trial: LabelledTrial, recording: Recording, configuration: DetectorConfiguration,
                               upright: (x: Double, y: Double, z: Double)? = nil) -> TrialOutcome {
        var detector = configuration.makeDetector()
        if let upright { detector.learnedUpright(upright) }
        let detections = DetectorRunner.detections(in: recording.samples, by: &detector)
        let reference = peakMagnitudeTime(recording.samples) ?? 0
        return TrialOutcome(
            trial: trial, duration: recording.duration, detections: detections, referenceImpact: reference,
            undecided: undecided(detector, kind: trial.label.kind, recording: recording, referenceImpact: reference))
    }

    /// Seconds a detector needs after the largest acceleration before it can tell that it was
    /// an impact: the multiphase detector's ±1 s local maximum of the 125 ms mean.
    public static let impactConfirmation = 1.125

    /// Why a trial that ended without a detection cannot be judged, if it cannot: the detector
    /// still had a decision due, or (a fall trial) the recording ends less than
    /// ``impactConfirmation`` after its largest acceleration, before any detector could know
    /// there was an impact.
    public static func undecided(_ detector: any FallDetector, kind: TrialLabel.Kind, recording: Recording,
                                 referenceImpact: Double) -> OpenDecision? {
        if let open = detector.openDecision { return open }
        guard kind == .fall, let last = recording.samples.last?.time,
              last - referenceImpact < impactConfirmation else { return nil }
        return OpenDecision(impactTime: referenceImpact, dueTime: referenceImpact + impactConfirmation, rule: "impact-at-end")
    }
}

/// The values of `results` in order; the first failure is thrown, or with `skipBad` every
/// failure is listed apart.
func gather<T>(_ results: [Result<T, RecordingFileError>], skipBad: Bool) throws(RecordingFileError) -> ([T], [RecordingFileError]) {
    var values: [T] = [], skipped: [RecordingFileError] = []
    values.reserveCapacity(results.count)
    for r in results {
        switch r {
        case .success(let v): values.append(v)
        case .failure(let e):
            if !skipBad { throw e }
            skipped.append(e)
        }
    }
    return (values, skipped)
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

/// The upright a worn device learns while its wearer walks (``UprightLearner``), emulated for
/// trial folders: each trial gets the upright from the walking in the same subject's *other*
/// trials (no labels, no axis convention), nil where they walked less than 5 s in all.
public enum SubjectUpright {
    /// What one recording's walking teaches, through the bridge's resampler at its own rate.
    public static func learner(_ samples: [AccelerationSample]) -> UprightLearner {
        var upright = UprightLearner()
        guard var resampler = try? Resampler(inputRate: Resampler.rate(of: samples)) else { return upright }
        for s in samples { resampler.process(s) { upright.process($0) } }
        return upright
    }

    /// Per trial, the upright from its subject's other trials.
    public static func uprights(subjects: [String], learners: [UprightLearner]) -> [(x: Double, y: Double, z: Double)?] {
        var total: [String: UprightLearner] = [:]
        for (s, l) in zip(subjects, learners) { total[s, default: UprightLearner()].add(sum: l.sum, count: l.count) }
        return zip(subjects, learners).map { s, l in
            guard let all = total[s] else { return nil }
            var others = UprightLearner()
            others.add(sum: (all.sum.x - l.sum.x, all.sum.y - l.sum.y, all.sum.z - l.sum.z), count: all.count - l.count)
            return others.upright   // the mean of all their walking (one lab session, one mounting)
        }
    }
}
