import Foundation
import Testing
import FallGuardTestSupport

/// `fallguard run` as deployed on a Pi, on emulated hardware: the IIO emulator's MPU6050
/// streams a real fall recording through the real libiio, the buzzer, LED and button are driven
/// through the real libgpiod in the GPIO emulator, and alerts go through the outbox to a real
/// mosquitto broker, watched by a real subscriber. One run aborts, one lets the alert go out.
@Suite(.serialized, .enabled(if: Emulator.available, GPIOEmulatorRun.skipReason))
struct DaemonEndToEndTests {
    /// A real broker (the shared launcher) and `mosquitto_sub -v` on this bridge's topics.
    final class Broker {
        let mosquitto: MosquittoBroker
        let subscriber = Process()
        let received = Pipe()
        var port: Int { mosquitto.port }

        init() async throws {
            mosquitto = try await MosquittoBroker()
            subscriber.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
            subscriber.arguments = ["-h", "127.0.0.1", "-p", "\(port)", "-v", "-i", "e2e-sub", "-t", "fallguard/e2e/#"]
            subscriber.standardOutput = received
            try subscriber.run()
            guard await mosquitto.waitForSubscription(of: "e2e-sub") else { throw BrokerError("mosquitto_sub did not subscribe") }
        }

        deinit { if subscriber.isRunning { kill(subscriber.processIdentifier, SIGKILL) } }

        /// Everything received so far, after stopping the subscriber.
        func messages() -> String {
            if subscriber.isRunning { kill(subscriber.processIdentifier, SIGKILL) }
            subscriber.waitUntilExit()
            return String(decoding: received.fileHandleForReading.availableData, as: UTF8.self)
        }
    }

    func config(_ broker: Broker, state: String, lib: GPIOLib) throws -> String {
        let path = state + ".yaml"
        try """
            sensor: {uri: "local:", mode: buffered}
            gpio: {library: \(lib.rawValue), chip: gpiochip0, buzzer: {line: GPIO18}, button: {line: GPIO17, bias: pull-up}, led: {line: GPIO27}}
            alarm: {countdown: 5, final-phase: 2}
            state: {directory: "\(state)"}
            metrics: {enabled: false}
            wearer: {name: Test Wearer, location: the lab}
            channels:
              mqtt: {type: mqtt, host: 127.0.0.1, port: \(broker.port), device: e2e}
            \(broadcastPolicy("mqtt"))
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func daemon(_ broker: Broker, seconds: Int, lib: GPIOLib) throws -> (GPIOEmulatorRun, String) {
        let state = NSTemporaryDirectory() + "fg-e2e-state-\(UUID().uuidString.prefix(8))"
        let dir = NSTemporaryDirectory() + "fg-e2e-rec-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let fall = try shortFallRecording(in: dir)
        let run = try GPIOEmulatorRun(["run", "--config", try config(broker, state: state, lib: lib), "--duration", "\(seconds)"],
                                      wrapper: [Emulator.root + "/tools/iio-emulator/iio-emu", "--model", "mpu6050",
                                                "--recording", fall, "--"], library: lib)
        return (run, state)
    }

    @Test(arguments: GPIOLib.allCases)
    func aFallSoundsTheBuzzerAndAShortPressAbortsItNothingIsSent(lib: GPIOLib) async throws {
        let broker = try await Broker()
        let (run, state) = try daemon(broker, seconds: 14, lib: lib)
        #expect(run.waitForLog("monitoring:", timeout: 20), "\(run.stderr)")
        // The start-up log and the status name the library.
        let named = lib == .v2 ? "gpio: libgpiod 2." : "gpio: libgpiod 1.6"
        #expect(run.stderr.contains(named) && run.stderr.contains("(gpio.library: \(lib.rawValue))"), "\(run.stderr)")
        // The status service writes status.json once a second: wait for it rather than 1.5 s.
        let gpioStatus = #""gpio" : "libgpiod \#(lib == .v2 ? "2." : "1.6")"#
        func status() -> String { (try? String(contentsOfFile: state + "/status.json", encoding: .utf8)) ?? "" }
        #expect(await until(10) { status().contains(gpioStatus) }, "\(status())")
        #expect(run.waitForLog("fall suspected", timeout: 20), "\(run.stderr)")
        usleep(1_500_000)
        #expect(try run.ctl("hold 17 200").hasPrefix("ok"))
        #expect(run.wait() == 0, "\(run.stderr)")
        let buzzer = try run.levels(offset: 18)
        #expect(buzzer.contains { $0.value == 1 }, "the buzzer sounded")
        #expect(buzzer.last?.value == 0, "and is silent at the end")
        let incidents = try String(contentsOfFile: state + "/incidents.jsonl", encoding: .utf8)
        #expect(incidents.contains("\"false-alarm\""), "\(incidents)")
        let mqtt = broker.messages()
        #expect(mqtt.contains("fallguard/e2e/availability online"), "\(mqtt)")
        #expect(mqtt.contains("fallguard/e2e/worn worn"), "worn, retained from the first connect: \(mqtt)")
        #expect(!mqtt.contains("fallguard/e2e/alert "), "no alert after an abort: \(mqtt)")
    }

    @Test(arguments: GPIOLib.allCases)
    func anUnabortedFallIsDeliveredOverMQTT(lib: GPIOLib) async throws {
        let broker = try await Broker()
        let (run, state) = try daemon(broker, seconds: 18, lib: lib)
        #expect(run.waitForLog("fall suspected", timeout: 20), "\(run.stderr)")
        #expect(run.wait() == 0, "\(run.stderr)")
        let mqtt = broker.messages()
        let alert = try #require(mqtt.split(separator: "\n").first { $0.hasPrefix("fallguard/e2e/alert ") }, "\(mqtt)\n\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(alert.dropFirst("fallguard/e2e/alert ".count).utf8)) as? [String: Any])
        let a = try #require(json["alert"] as? [String: Any])
        #expect(a["kind"] as? String == "fall" && a["incident"] as? String == "FG-1")
        #expect((json["idempotency_key"] ?? json["idempotencyKey"]) != nil, "\(json.keys)")
        #expect((json["wearer"] as? [String: Any])?["name"] as? String == "Test Wearer")
        #expect(try run.levels(offset: 18).contains { $0.value == 1 })
        _ = state
    }
}
