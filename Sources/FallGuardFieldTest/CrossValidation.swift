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
    }

    public struct Counts: Sendable, Equatable {
        public var falls = 0, detected = 0, adls = 0, alarmed = 0
        public var sensitivity: Double? { falls == 0 ? nil : 100 * Double(detected) / Double(falls) }
        public var specificity: Double? { adls == 0 ? nil : 100 * Double(adls - alarmed) / Double(adls) }
        public var accuracy: Double? {
            falls + adls == 0 ? nil : 100 * Double(detected + adls - alarmed) / Double(falls + adls)
        }
        static func + (a: Counts, b: Counts) -> Counts {
            Counts(falls: a.falls + b.falls, detected: a.detected + b.detected, adls: a.adls + b.adls, alarmed: a.alarmed + b.alarmed)
        }
        static func - (a: Counts, b: Counts) -> Counts {
            Counts(falls: a.falls - b.falls, detected: a.detected - b.detected, adls: a.adls - b.adls, alarmed: a.alarmed - b.alarmed)
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
        minimumTrainingSensitivity: Double = 99.5, threads: Int = 2
    ) throws(DetectorSettingError) -> CrossValidation {
        let configurations = try grid.map { p throws(DetectorSettingError) in
            try DetectorConfiguration(name: detector, assignments: base + p.assignments)
        }
        let subjects = Array(Set(dataset.trials.map(\.label.subject))).sorted()
        let subjectIndex = Dictionary(uniqueKeysWithValues: subjects.enumerated().map { ($1, $0) })
        let trialSubject = dataset.trials.map { subjectIndex[$0.label.subject]! }
        let trials = dataset.trials

        // counts[point][subject]
        let counts: [[Counts]] = parallelMap(configurations.count, threads: threads, state: ()) { _, g in
            var perSubject = Array(repeating: Counts(), count: subjects.count)
            for (i, rec) in recordings.enumerated() {
                var d = configurations[g].makeDetector()
                var alarmed = false
                for s in rec.samples where d.process(s) != nil {
                    alarmed = true
                    break
                }
                let k = trialSubject[i]
                switch trials[i].label.kind {
                case .fall:
                    perSubject[k].falls += 1
                    if alarmed { perSubject[k].detected += 1 }
                case .adl:
                    perSubject[k].adls += 1
                    if alarmed { perSubject[k].alarmed += 1 }
                }
            }
            return perSubject
        }
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
                              trainingSpecificity: training.specificity, heldOut: held))
        }
        let all = choose { totals[$0] }
        return CrossValidation(
            detector: detector, points: grid, minimumTrainingSensitivity: minimumTrainingSensitivity,
            folds: folds, heldOut: pooled, chosenOnAll: grid[all], chosenOnAllCounts: totals[all])
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
