import FallGuardCore
import Foundation
import Logging
import Synchronization

/// What a bedside box with a speaker says, and how: espeak-ng's voice (a language such as `en`
/// or `de`), its speed, and the ALSA device `aplay` plays to.
public struct SpeechSettings: Sendable, Equatable {
    public var voice: String
    /// Words per minute, 80 to 450 (espeak-ng's range).
    public var rate: Int
    /// The ALSA device, e.g. `default`, `plughw:1,0`.
    public var device: String
    /// When the countdown begins.
    public var fallDetected: String
    /// When a message of the alarm went out.
    public var alertSent: String
    /// When a caregiver acknowledged; `{by}` is their name.
    public var helpComing: String

    public init(voice: String = "en", rate: Int = 150, device: String = "default",
                fallDetected: String = "A fall was detected. Press the button if you are all right.",
                alertSent: String = "Your helpers have been told.",
                helpComing: String = "{by} knows and is on the way.") {
        (self.voice, self.rate, self.device) = (voice, rate, device)
        (self.fallDetected, self.alertSent, self.helpComing) = (fallDetected, alertSent, helpComing)
    }

    /// The words for the alarm's effects, if any: the countdown's start, the alert sent, a
    /// caregiver's acknowledgement (the last one of a batch wins).
    public func prompt(for effects: [AlertEffect]) -> String? {
        var said: String?
        for effect in effects {
            switch effect {
            case let .record(e) where e.event == .fallSuspected: said = fallDetected
            case let .record(e) where e.event == .alertDelivered: said = alertSent
            case let .dispatch(alert) where alert.kind == .acknowledged:
                // `Anna (SMS reply)`: the name alone is spoken.
                let by = alert.acknowledgedBy.map { $0.split(separator: "(").first.map(String.init) ?? $0 }?
                    .trimmingCharacters(in: .whitespaces)
                said = helpComing.replacingOccurrences(of: "{by}", with: by.flatMap { $0.isEmpty ? nil : $0 } ?? "A helper")
            default: break
            }
        }
        return said
    }
}

/// Speaks prompts through espeak-ng into `aplay` (ALSA), never blocking the alarm: each prompt
/// replaces the one still speaking. A missing program or sound card is logged once; the buzzer
/// and LED say the same things.
public final class SpokenPrompts: Sendable {
    public let settings: SpeechSettings
    private let logger: Logger
    private let speaking = Mutex<[Process]>([])
    private let warned = Atomic<Bool>(false)
    public static let espeak = "/usr/bin/espeak-ng", aplay = "/usr/bin/aplay"

    public init(settings: SpeechSettings, logger: Logger = Logger(label: "fallguard.speech")) {
        (self.settings, self.logger) = (settings, logger)
    }

    /// After each batch of the alarm's effects.
    public func handle(_ effects: [AlertEffect]) {
        guard let text = settings.prompt(for: effects) else { return }
        say(text)
    }

    /// Speaks `text` now, stopping what is still being said.
    public func say(_ text: String) {
        let espeak = Process(), aplay = Process(), pipe = Pipe()
        espeak.executableURL = URL(fileURLWithPath: Self.espeak)
        espeak.arguments = arguments(text, output: ["--stdout"])
        espeak.standardOutput = pipe
        espeak.standardError = FileHandle.nullDevice
        aplay.executableURL = URL(fileURLWithPath: Self.aplay)
        aplay.arguments = ["-q", "-D", settings.device]
        aplay.standardInput = pipe
        aplay.standardError = FileHandle.nullDevice
        let previous = speaking.withLock { p in defer { p = [] }; return p }
        for p in previous where p.isRunning { p.terminate() }
        do {
            try aplay.run()
            try espeak.run()
            speaking.withLock { $0 = [espeak, aplay] }
        } catch {
            if aplay.isRunning { aplay.terminate() }
            if !warned.exchange(true, ordering: .relaxed) {
                logger.error("speech: cannot run \(Self.espeak) | \(Self.aplay) -D \(settings.device): \(error) (the buzzer and LED still say it)")
            }
        }
    }

    /// Renders `text` to a WAV file, as it would be spoken (tests, and trying a voice).
    public func render(_ text: String, to path: String) throws {
        let espeak = Process()
        espeak.executableURL = URL(fileURLWithPath: Self.espeak)
        espeak.arguments = arguments(text, output: ["-w", path])
        espeak.standardError = FileHandle.nullDevice
        try espeak.run()
        espeak.waitUntilExit()
        guard espeak.terminationStatus == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }

    /// espeak-ng's arguments: the options, then the text after `--`, so that nothing in it is
    /// read as an option.
    func arguments(_ text: String, output: [String]) -> [String] {
        ["-v", settings.voice, "-s", String(settings.rate)] + output + ["--", text]
    }

    /// Stops what is being said.
    public func stop() {
        for p in speaking.withLock({ p in defer { p = [] }; return p }) where p.isRunning { p.terminate() }
    }
}
