import FallGuardCore
import FallGuardDaemon
import FallGuardFieldTest
import FallGuardHardware
import Dispatch
import Foundation

/// The checks `fallguard setup` walks once the written file passes check-config (issue 39):
/// the sensor found and oriented, the buzzer heard, the button pressed, the test alert received,
/// a simulated fall aborted. Each asks one question that `skip` answers; in `--answers` mode
/// each takes its recorded answer from the file instead (absent: skipped), and
/// `mount-matrix` there is the orientation's recorded result.
struct SetupChecks {
    /// The answers-file keys of the checks and what each may say.
    static let keys: [(key: String, values: [String])] = [
        ("mount-matrix", ["null", "[[...], [...], [...]]"]),
        ("buzzer-heard", ["yes", "no", "skip"]),
        ("button-pressed", ["yes", "skip"]),
        ("test-alert-received", ["yes", "no", "skip"]),
        ("simulated-fall", ["aborted", "skip"]),
    ]
    /// How long the wearer has to press the button, and to stand or lie still (s).
    static let pressWithin = 20.0
    static let stillFor = 3.0

    let config: String
    /// The setup's answers (the orientation check may change `mount-matrix`).
    var answers: [String: String]
    /// The answers file's lines, or nil on a terminal.
    let recorded: [String: String]?
    let noHardware: Bool
    /// Rewrites the configuration from `answers` (after the orientation changed it).
    let rewrite: ([String: String]) throws -> Void

    var interactive: Bool { recorded == nil }
    var buzzerLine: String { answers["buzzer"] ?? "GPIO18" }
    var buttonLine: String { answers["button"] ?? "GPIO17" }
    var chipArguments: [String] {
        ["--chip", "gpiochip0", "--buzzer-line", buzzerLine, "--button-line", buttonLine, "--led-line", answers["led"] ?? "GPIO27"]
    }

    /// A check's answer: asked (Enter takes `suggested`), or recorded ("skip" when absent).
    func answer(_ key: String, _ prompt: String, suggested: String) throws -> String {
        guard interactive else { return recorded?[key] ?? "skip" }
        guard let v = SetupCommand.ask(Question(key: key, prompt: prompt), default: suggested, atEnd: nil) else {
            throw SetupCommand.fail("\n\(key): no answer (end of input)", status: 1)
        }
        return v.lowercased()
    }

    static func says(_ v: String, _ words: String...) -> Bool { words.contains(v) }

    // MARK: - 2. The sensor, found and oriented

    mutating func sensor() throws {
        print("\n2. The sensor ...")
        let found = (try? AccelerometerDiscovery.list(uri: "local:")) ?? []
        let wanted = answers["sensor"].flatMap { $0 == "auto" ? nil : $0 }
        guard let sensor = found.first(where: { wanted == nil || $0.name == wanted }) else {
            print("NO SENSOR FOUND\(wanted.map { " (\($0))" } ?? ""): check the wiring and the overlay (docs/raspberry-pi.md, steps 3, 5 and 6), then `fallguard devices`.")
            return
        }
        print("sensor found: \(sensor.name) (\(sensor.id)), \(sensor.mode.rawValue)")
        let configured = answers["mount-matrix"].flatMap { $0 == "null" ? nil : SetupCommand.matrix($0) }
        let current = configured ?? sensor.mountMatrix ?? MountOrientation.identity
        guard interactive else {
            print("orientation: \(configured.map { "mount-matrix \(MountOrientation.text($0)) from the answers file" } ?? "not measured (mount-matrix null: the driver's)")")
            return
        }
        while true {
            let stand = try answer("orientation", "Orientation: wear it as it will be worn, stand upright and still, then press Enter and keep still \(Int(Self.stillFor)) s (skip: leave mount-matrix as it is)", suggested: "")
            if stand == "skip" { print("orientation: skipped"); return }
            let standing = try posture(sensor.name)
            print("  standing: \(Self.describe(standing))")
            let lie = try answer("orientation", "Now lie down flat on your back, keep still, then press Enter and keep still \(Int(Self.stillFor)) s (skip: leave it)", suggested: "")
            if lie == "skip" { print("orientation: skipped"); return }
            let lying = try posture(sensor.name)
            print("  lying: \(Self.describe(lying))")
            switch MountOrientation.derive(standing: standing, lying: lying) {
            case let .failure(problem):
                print("  \(problem). Once more:")
                continue
            case let .success(r):
                let text = MountOrientation.text(r.matrix)
                let fit = r.offSquare <= MountOrientation.squareTolerance
                    ? "the board's axes along the body's (\(Int(r.offSquare.rounded()))° from square)"
                    : "the board sits at an angle (\(Int(r.offSquare.rounded()))° from square): the exact rotation"
                if MountOrientation.angleBetween(r.matrix, current) <= MountOrientation.confirmTolerance {
                    print("orientation confirmed: the sensor sits as configured (mount-matrix \(MountOrientation.text(current)); measured \(text), \(fit))")
                    return
                }
                print("  the sensor sits otherwise than configured: mount-matrix \(text) (\(fit); standing then reads y -1 g, lying on the back x +1 g)")
                let write = try answer("write-orientation", "Write mount-matrix \(text) into the configuration? yes/no", suggested: "yes")
                guard Self.says(write, "y", "yes") else { print("orientation: left as it was"); return }
                answers["mount-matrix"] = text
                try rewrite(answers)
                print("orientation: mount-matrix \(text) written to \(config)")
                return
            }
        }
    }

    /// `stillFor` seconds of the sensor in its own frame (the driver's matrix overridden by
    /// the identity: the matrix found replaces it).
    func posture(_ device: String) throws -> MountOrientation.Posture {
        flushStandardOutput()
        let sensor: IIOAccelerometer
        do {
            sensor = try IIOAccelerometer(AccelerometerConfiguration(device: device, mountMatrix: MountOrientation.identity, readGyroscope: false))
        } catch { throw SetupCommand.fail("\(error)", status: 1) }
        if let e = sensor.startCapture() { throw SetupCommand.fail("\(e)", status: 1) }
        defer { sensor.finishCapture() }
        let ring = SPSCRingBuffer<AccelerationSample>(minimumCapacity: 1024)
        var samples: [AccelerationSample] = []
        let end = MonotonicClock.nanoseconds() + Int64(Self.stillFor * 1e9)
        while MonotonicClock.nanoseconds() < end {
            if let e = sensor.captureStep(into: ring) { throw SetupCommand.fail("\(e)", status: 1) }
            _ = ring.drain { samples.append($0) }
        }
        return MountOrientation.Posture(samples: samples)
    }

    static func describe(_ p: MountOrientation.Posture) -> String {
        func g(_ v: Double) -> String { String(format: "%+.2f", v) }
        return "x \(g(p.x)) y \(g(p.y)) z \(g(p.z)) g (moved \(String(format: "%.3f", p.spread)) g RMS, \(p.count) samples)"
    }

    // MARK: - 3. The buzzer, heard

    func buzzer() throws {
        if !interactive, Self.says(recorded?["buzzer-heard"] ?? "skip", "skip") { print("\n3. The buzzer: skipped"); return }
        print("\n3. The buzzer (\(buzzerLine)): sounding it for 2 s ...")
        flushStandardOutput()
        let run = SetupCommand.runSelf(["gpio", "--chip", "gpiochip0", "--output", buzzerLine, "--pattern", "250/250x4", "--duration", "2"])
        guard run.status == 0 else {
            print(run.output, terminator: "")
            throw SetupCommand.fail(Self.busyAdvice(run.output) ?? "the buzzer's line could not be driven (above)", status: 1)
        }
        let heard = try answer("buzzer-heard", "Did you hear the buzzer beep four times? yes/no (skip)", suggested: "yes")
        if heard == "skip" { print("buzzer: skipped"); return }
        guard Self.says(heard, "y", "yes") else {
            throw SetupCommand.fail("the buzzer was not heard: check its wiring (docs/raspberry-pi.md, step 3: + to 5 V, − through the transistor, base to \(buzzerLine)) and that it is an active buzzer", status: 1)
        }
        print("buzzer heard.")
    }

    // MARK: - 4. The button, pressed

    func button() throws {
        let go = try answer("button-pressed", "Button: press Enter, then press the abort button within \(Int(Self.pressWithin)) s (skip: not now)", suggested: "yes")
        if go == "skip" { print("\n4. The button: skipped"); return }
        print("\n4. The button (\(buttonLine)) ...")
        flushStandardOutput()
        var told = false
        let run = SetupCommand.watchSelf(["gpio", "--chip", "gpiochip0", "--button", buttonLine, "--duration", String(Int(Self.pressWithin))],
                                         timeout: Self.pressWithin + 5) { output in
            if !told, output.contains(#""event":"ready""#) {
                // Only once the line is watched: a press before would not count.
                told = true
                print("Press the abort button now (within \(Int(Self.pressWithin)) s) ...")
                flushStandardOutput()
            }
            return output.contains(#""event":"pressed""#)
        }
        guard run.matched else {
            if run.status != 0 { print(run.output, terminator: "") }
            throw SetupCommand.fail(Self.busyAdvice(run.output)
                ?? "no press of the button within \(Int(Self.pressWithin)) s: check its wiring (docs/raspberry-pi.md, step 3: \(buttonLine) to GND through the button)", status: 1)
        }
        print("button pressed.")
    }

    // MARK: - 6. A simulated fall, aborted

    func simulatedFall() throws {
        let countdown = answers["countdown"] ?? "30"
        let go = try answer("simulated-fall", "Simulated fall: press Enter; a recorded fall plays, the buzzer counts down \(countdown) s, and the wearer presses the button to stop it (skip: not now)", suggested: "aborted")
        if go == "skip" { print("\n6. The simulated fall: skipped"); return }
        print("\n6. A simulated fall (\(BundledRecordings.demoFallName)) plays now: it is detected about 10 s in ...")
        flushStandardOutput()
        let dir = NSTemporaryDirectory() + "fallguard-setup-\(getpid())"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let recording = dir + "/demo-fall.csv"
        _ = FileManager.default.createFile(atPath: recording, contents: Data(BundledRecordings.demoFall))
        let incidents = dir + "/incidents.jsonl"
        var told = false
        let limit = 20 + (Double(countdown) ?? 30)
        let run = SetupCommand.watchSelf(["alarm", "--recording", recording, "--buzzer", "gpio", "--state", dir,
                                          "--countdown", countdown, "--duration", String(Int(limit))] + chipArguments,
                                         timeout: limit + 5) { output in
            if !told, output.contains(#""event":"fall-suspected""#) {
                told = true
                print("FALL DETECTED: the buzzer counts down. Press the button now to stop it, as the wearer would.")
                flushStandardOutput()
            }
            let log = (try? String(contentsOfFile: incidents, encoding: .utf8)) ?? ""
            return log.contains(#""event":"false-alarm""#) || output.contains(#""event":"alert""#)
        }
        guard run.status == 0 || run.matched else {
            print(run.output, terminator: "")
            throw SetupCommand.fail(Self.busyAdvice(run.output) ?? "the simulated fall could not be played (above)", status: 1)
        }
        let log = (try? String(contentsOfFile: incidents, encoding: .utf8)) ?? ""
        guard log.contains(#""event":"false-alarm""#) else {
            throw SetupCommand.fail(told
                ? "the countdown was not stopped: the alert would have gone out (this time only to the screen). Check the button (step 3) and run `fallguard setup` again"
                : "the simulated fall was not detected: \(run.output.suffix(400))", status: 1)
        }
        print("simulated fall aborted: the countdown stopped at the press, nothing was sent.")
    }

    /// What to do when a line is held by another program (the service).
    static func busyAdvice(_ output: String) -> String? {
        output.lowercased().contains("busy") ? "a GPIO line is in use, probably by the service: sudo systemctl stop fallguard, run `sudo fallguard setup` again, then sudo systemctl start fallguard" : nil
    }
}

/// While setup checks the hardware the service must let go of it: stopped for the checks when
/// it runs, started again at the end (the wearer is not left unprotected after setup), also when
/// setup is stopped during the checks (Ctrl-C, a closed terminal, SIGTERM).
/// @unchecked: `stopped` is read and written by the setup's thread and, once, by the signal
/// handler's; a restart twice is harmless (`systemctl restart`).
final class ServicePause: @unchecked Sendable {
    private(set) var stopped = false
    private var signals: [any DispatchSourceSignal] = []

    func stopForChecks() {
        guard FileManager.default.fileExists(atPath: "/run/systemd/system"),
              SetupCommand.run("/usr/bin/systemctl", ["is-active", "--quiet", "fallguard"]) == 0 else { return }
        print("(stopping fallguard.service for the checks: it holds the sensor, buzzer and button; it is started again at the end)")
        stopped = SetupCommand.run("/usr/bin/systemctl", ["stop", "fallguard"]) == 0
        if stopped { restartOnSignals() }
    }

    /// A signal that would end setup during the checks starts the service again first.
    private func restartOnSignals() {
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [self] in
                print("\n(setup stopped: starting fallguard.service again, so that the wearer stays protected)")
                restart()
                exit(128 + sig)
            }
            source.resume()
            signals.append(source)
        }
    }

    func restart() {
        guard stopped else { return }
        stopped = false
        let ok = SetupCommand.run("/usr/bin/systemctl", ["restart", "fallguard"]) == 0
        print(ok ? "fallguard.service started again, with the new configuration." : "COULD NOT START fallguard.service: sudo systemctl status fallguard")
        flushStandardOutput()
    }
}
