import FallGuardCore

/// Chooses detector settings by subject-wise cross-validation: for each subject, the grid point
/// that scores best on all the *other* subjects is applied to that subject's trials, so the
/// pooled figures are held-out figures that no setting was fitted to.
public struct CrossValidation: Sendable {
    /// One point of the grid: `key=value` assignments over the base settings.
    public struct Point: Sendable, Hashable {
        public var assignments: [String]
    }

    public struct Fold: Sendable {
        public var subject: String
        public var chosen: Point
        public var trainingSensitivity: Double?
        public var trainingSpecificity: Double?
        public var heldOut: Counts
        /// The held-out counts of the focus codes alone (e.g. F10, F13).
        public var heldOutFocus: Counts
    }

    /// Trial counts; trials too short to judge are counted apart, not in falls or adls.
    public struct Counts: Sendable, Equatable {
        public var falls = 0, detected = 0, adls = 0, alarmed = 0, tooShort = 0
        public init(falls: Int = 0, detected: Int = 0, adls: Int = 0, alarmed: Int = 0, tooShort: Int = 0) {
            (self.falls, self.detected, self.adls, self.alarmed, self.tooShort) = (falls, detected, adls, alarmed, tooShort)
        }
        public var sensitivity: Double? { falls == 0 ? nil : 100 * Double(detected) / Double(falls) }
        public var specificity: Double? { adls == 0 ? nil : 100 * Double(adls - alarmed) / Double(adls) }
        public var accuracy: Double? {
            falls + adls == 0 ? nil : 100 * Double(detected + adls - alarmed) / Double(falls + adls)
        }
        public static func + (a: Counts, b: Counts) -> Counts {
            Counts(falls: a.falls + b.falls, detected: a.detected + b.detected, adls: a.adls + b.adls,
                   alarmed: a.alarmed + b.alarmed, tooShort: a.tooShort + b.tooShort)
        }
        public static func - (a: Counts, b: Counts) -> Counts {
            Counts(falls: a.falls - b.falls, detected: a.detected - b.detected, adls: a.adls - b.adls,
                   alarmed: a.alarmed - b.alarmed, tooShort: a.tooShort - b.tooShort)
        }
    }

    public var detector: String
    public var points: [Point]
    public var minimumTrainingSensitivity: Double
    public var folds: [Fold]
    /// Pooled held-out counts over all folds.
    public var heldOut: Counts
    /// What the same rule chooses on all subjects (the setting to ship), and its (fitted) counts.
    public var chosenOnAll: Point
    public var chosenOnAllCounts: Counts
    /// The codes counted in ``Fold/heldOutFocus``.
    public var focusCodes: [String]

    /// Pooled held-out counts per population (folds are subjects, so each subject's held-out
    /// trials go to its population), and the same for the focus codes.
    public func byPopulation(_ populations: Populations) -> [(population: String, subjects: Int, heldOut: Counts, focus: Counts)] {
        populations.names(for: folds.map(\.subject)).map { name in
            let fs = folds.filter { populations.name(of: $0.subject) == name }
            return (name, fs.count, fs.map(\.heldOut).reduce(Counts(), +), fs.map(\.heldOutFocus).reduce(Counts(), +))
        }
    }

    /// Builds the grid from `key=v1,v2,…` specifications (cartesian product).
    public static func grid(_ specs: [String]) throws(DetectorSettingError) -> [Point] {
        var points: [[String]] = [[]]
        for spec in specs {
            guard let eq = spec.firstIndex(of: "=") else { throw .malformed(spec) }
            let key = String(spec[..<eq])
            let values = spec[spec.index(after: eq)...].split(separator: ",").map(String.init)
            guard !key.isEmpty, !values.isEmpty else { throw .malformed(spec) }
            points = points.flatMap { p in values.map { p + ["\(key)=\($0)"] } }
        }
        return points.map(Point.init)
    }

    /// Runs the cross-validation. `recordings[i]` belongs to `dataset.trials[i]`.
    public static func run(
        dataset: Dataset, recordings: [Recording], detector: String, base: [String], grid: [Point],
        minimumTrainingSensitivity: Double = 99.5, focusCodes: [String] = [], threads: Int = 2
    ) throws(DetectorSettingError) -> CrossValidation {
        let focus = Set(focusCodes)
        let configurations = try grid.map { p throws(DetectorSettingError) in
            try DetectorConfiguration(name: detector, assignments: base + p.assignments)
        }
        let subjects = Array(Set(dataset.trials.map(\.label.subject))).sorted()
        let subjectIndex = Dictionary(uniqueKeysWithValues: subjects.enumerated().map { ($1, $0) })
        let trialSubject = dataset.trials.map { subjectIndex[$0.label.subject]! }
        let trials = dataset.trials
        let rates = recordings.map { Resampler.rate(of: $0.samples) }   // once, not once per grid point
        let uprights = SubjectUpright.uprights(subjects: trials.map(\.label.subject),
                                               learners: recordings.map { SubjectUpright.learner($0.samples) })

        // both[point] = (all trials, focus-code trials) per subject
        let both: [([Counts], [Counts])] = parallelMap(configurations.count, threads: threads, state: ()) { _, g in
            var perSubject = Array(repeating: Counts(), count: subjects.count)
            var focusSubject = perSubject
            for (i, rec) in recordings.enumerated() {
                var d = configurations[g].makeDetector()
                if let u = uprights[i] { d.learnedUpright(u) }
                let alarmed = !DetectorRunner.detections(in: rec.samples, by: &d, rate: rates[i], stopAtFirst: true).isEmpty
                let k = trialSubject[i]
                var c = Counts()
                if !alarmed, Evaluator.undecided(d, kind: trials[i].label.kind, recording: rec,
                                                 referenceImpact: peakMagnitudeTime(rec.samples) ?? 0) != nil {
                    c.tooShort = 1
                } else {
                    switch trials[i].label.kind {
                    case .fall:
                        c.falls = 1
                        if alarmed { c.detected = 1 }
                    case .adl:
                        c.adls = 1
                        if alarmed { c.alarmed = 1 }
                    }
                }
                perSubject[k] = perSubject[k] + c
                if focus.contains(trials[i].label.code) { focusSubject[k] = focusSubject[k] + c }
            }
            return (perSubject, focusSubject)
        }
        let counts = both.map(\.0)   // counts[point][subject]
        let totals = counts.map { $0.reduce(Counts(), +) }

        func choose(_ training: (Int) -> Counts) -> Int {
            var best = 0
            func key(_ c: Counts) -> (Int, Double, Double) {
                let sens = c.sensitivity ?? 100, spec = c.specificity ?? 100
                return sens >= minimumTrainingSensitivity ? (1, spec, sens) : (0, sens, spec)
            }
            var bestKey = key(training(0))
            for g in 1..<max(1, counts.count) {
                let k = key(training(g))
                if k > bestKey { best = g; bestKey = k }
            }
            return best
        }

        var folds: [Fold] = []
        var pooled = Counts()
        for (k, subject) in subjects.enumerated() {
            let g = choose { totals[$0] - counts[$0][k] }
            let training = totals[g] - counts[g][k]
            let held = counts[g][k]
            pooled = pooled + held
            folds.append(Fold(subject: subject, chosen: grid[g], trainingSensitivity: training.sensitivity,
                              trainingSpecificity: training.specificity, heldOut: held, heldOutFocus: both[g].1[k]))
        }
        let all = choose { totals[$0] }
        return CrossValidation(
            detector: detector, points: grid, minimumTrainingSensitivity: minimumTrainingSensitivity,
            folds: folds, heldOut: pooled, chosenOnAll: grid[all], chosenOnAllCounts: totals[all], focusCodes: focusCodes)
    }
}

/// Reads every trial of a dataset into memory (in trial order), on `threads` threads.
public func readAll(_ dataset: Dataset, threads: Int = 2) throws(RecordingFileError) -> [Recording] {
    let trials = dataset.trials
    let results = parallelMap(trials.count, threads: threads, state: [UInt8]()) { buffer, i -> Result<Recording, RecordingFileError> in
        Result { () throws(RecordingFileError) -> Recording in try RecordingFile.read(path: trials[i].path, reusing: &buffer) }
    }
    var out: [Recording] = []
    out.reserveCapacity(results.count)
    for r in results {
        switch r {
        case .success(let rec): out.append(rec)
        case .failure(let e): throw e
        }
    }
    return out
}
