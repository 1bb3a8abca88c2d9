import ArgumentParser
import FallGuardCore
import FallGuardFieldTest
import Foundation

struct CrossValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cross-validate",
        abstract: "Choose detector settings by leave-one-subject-out cross-validation and report held-out scores.",
        discussion: """
            For every subject in DIR, each point of the grid is scored on all other subjects; the point \
            with the best specificity among those whose training sensitivity reaches \
            --min-sensitivity (or, if none does, the most sensitive) is applied to the held-out \
            subject. The pooled held-out figures are what to expect on new people. The same rule on \
            all subjects gives the setting to ship. Trials too short to judge (see `fallguard evaluate \
            --help`) are counted apart. Held-out figures are also given per population (see \
            --population, --subjects, --focus); the folds stay one subject each.

            Example: fallguard cross-validate DIR --grid impact=2.5,3,3.5 --grid stillness=0.1,0.2
            """)

    @Argument(help: ArgumentHelp("Dataset folder (see `fallguard evaluate --help`).", valueName: "dir"))
    var directory: String

    @OptionGroup var detectorOptions: DetectorOptions

    @Option(name: .customLong("grid"), help: ArgumentHelp(
        "Values to try for one setting, e.g. impact=2.5,3,3.5 (repeatable; the grid is their product).",
        valueName: "key=v1,v2,…"))
    var grid: [String] = []

    @Option(help: "Training sensitivity, in percent, that a setting must reach before specificity counts.")
    var minSensitivity: Double = 99.5

    @Flag(help: "Print one JSON object.")
    var json = false

    @OptionGroup var populationOptions: PopulationOptions

    @OptionGroup var workers: ThreadsOption

    func run() throws {
        let threads = workers.threads
        let base = try detectorOptions.configuration()
        // The folds build their detectors by name and settings only (CrossValidation): refuse
        // rather than judge the gyroscope's data while saying it was left out.
        if base.accelerometerOnly {
            throw ValidationError("--accelerometer-only is for evaluate, replay and report; cross-validate does not take it yet")
        }
        let populations = try populationOptions.populations()
        let points: [CrossValidation.Point]
        do {
            points = try CrossValidation.grid(grid)
        } catch {
            throw ValidationError(error.description)
        }
        let dataset = try scanDataset(directory)
        guard !dataset.trials.isEmpty else {
            printError("\(directory): no labelled trials to cross-validate (continuous recordings are scored by `fallguard evaluate`)")
            throw ExitStatus.noInput
        }
        let recordings: [Recording]
        do {
            recordings = try readAll(dataset, threads: threads)
        } catch {
            printError(error.description)
            throw ExitStatus.dataError
        }
        let cv: CrossValidation
        do {
            cv = try CrossValidation.run(
                dataset: dataset, recordings: recordings, detector: base.name, base: detectorOptions.assignments,
                grid: points, minimumTrainingSensitivity: minSensitivity, focusCodes: populationOptions.focusCodes,
                threads: threads)
        } catch {
            throw ValidationError(error.description)
        }
        if json {
            var folds: [[String: Any]] = []
            for f in cv.folds {
                folds.append(["subject": f.subject, "chosen": f.chosen.assignments,
                              "falls": f.heldOut.falls, "detected": f.heldOut.detected,
                              "adls": f.heldOut.adls, "alarmed": f.heldOut.alarmed, "too_short": f.heldOut.tooShort])
            }
            var pops: [[String: Any]] = []
            for p in cv.byPopulation(populations) {
                var row: [String: Any] = [
                    "population": p.population, "subjects": p.subjects,
                    "falls": p.heldOut.falls, "detected_falls": p.heldOut.detected, "sensitivity": p.heldOut.sensitivity ?? NSNull(),
                    "adls": p.heldOut.adls, "alarmed_adls": p.heldOut.alarmed, "specificity": p.heldOut.specificity ?? NSNull(),
                    "too_short": p.heldOut.tooShort,
                ]
                if !cv.focusCodes.isEmpty {
                    row["focus"] = ["codes": cv.focusCodes, "falls": p.focus.falls, "detected_falls": p.focus.detected,
                                    "sensitivity": p.focus.sensitivity ?? NSNull(), "adls": p.focus.adls,
                                    "alarmed_adls": p.focus.alarmed, "specificity": p.focus.specificity ?? NSNull(),
                                    "too_short": p.focus.tooShort] as [String: Any]
                }
                pops.append(row)
            }
            let object: [String: Any] = [
                "detector": cv.detector, "grid_points": cv.points.count, "folds": folds,
                "sensitivity": cv.heldOut.sensitivity ?? NSNull(), "specificity": cv.heldOut.specificity ?? NSNull(),
                "accuracy": cv.heldOut.accuracy ?? NSNull(),
                "falls": cv.heldOut.falls, "adls": cv.heldOut.adls,
                "detected_falls": cv.heldOut.detected, "alarmed_adls": cv.heldOut.alarmed,
                "too_short": cv.heldOut.tooShort, "by_population": pops,
                "chosen_on_all": cv.chosenOnAll.assignments,
                "min_training_sensitivity": cv.minimumTrainingSensitivity,
            ]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        print("Detector \(cv.detector), \(cv.points.count) grid points, \(cv.folds.count) subjects (leave one subject out)")
        print("Rule: best training specificity with training sensitivity >= \(cv.minimumTrainingSensitivity) %\n")
        print("Subject  Falls  Detected  ADLs  Alarms  Short  Chosen")
        for f in cv.folds {
            print(f.subject.padding(to: 7) + String(format: "  %5d  %8d  %4d  %6d  %5d  ", f.heldOut.falls, f.heldOut.detected, f.heldOut.adls, f.heldOut.alarmed, f.heldOut.tooShort)
                  + (f.chosen.assignments.isEmpty ? "(defaults)" : f.chosen.assignments.joined(separator: " ")))
        }
        let h = cv.heldOut
        print(String(format: "\nHeld out: sensitivity %.2f %% (%d/%d), specificity %.2f %% (%d/%d), accuracy %.2f %%",
                     h.sensitivity ?? .nan, h.detected, h.falls, h.specificity ?? .nan, h.adls - h.alarmed, h.adls, h.accuracy ?? .nan))
        if h.tooShort > 0 {
            print("Too short to judge: \(h.tooShort) trials ended while a decision was still due (not in the figures above)")
        }
        let rows = cv.byPopulation(populations)
        if rows.count > 1 || !cv.focusCodes.isEmpty {
            print("\nHeld out by population:")
            func pct(_ v: Double?) -> String { v.map { String(format: "%6.2f %%", $0) } ?? "   n/a  " }
            let focus = cv.focusCodes.joined(separator: "+")
            for p in rows {
                print("  " + p.population.padding(to: 16) + String(format: " %2d subjects  sensitivity ", p.subjects) + pct(p.heldOut.sensitivity)
                      + String(format: " (%d/%d)  specificity ", p.heldOut.detected, p.heldOut.falls) + pct(p.heldOut.specificity)
                      + String(format: " (%d/%d)  too short %d", p.heldOut.adls - p.heldOut.alarmed, p.heldOut.adls, p.heldOut.tooShort))
            }
            if !cv.focusCodes.isEmpty {
                for p in rows where p.focus.falls + p.focus.adls + p.focus.tooShort > 0 {
                    print("  " + "\(p.population) \(focus)".padding(to: 16) + String(format: " %2d subjects  sensitivity ", p.subjects)
                          + pct(p.focus.sensitivity) + String(format: " (%d/%d)  specificity ", p.focus.detected, p.focus.falls)
                          + pct(p.focus.specificity) + String(format: " (%d/%d)  too short %d", p.focus.adls - p.focus.alarmed, p.focus.adls, p.focus.tooShort))
                }
            }
        }
        let a = cv.chosenOnAllCounts
        print("Chosen on all subjects: " + (cv.chosenOnAll.assignments.isEmpty ? "(defaults)" : cv.chosenOnAll.assignments.joined(separator: " "))
              + String(format: " (fitted: sensitivity %.2f %%, specificity %.2f %%)", a.sensitivity ?? .nan, a.specificity ?? .nan))
    }
}
