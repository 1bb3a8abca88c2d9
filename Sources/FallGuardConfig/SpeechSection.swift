import FallGuardConfigKeys
import FallGuardCore
import FallGuardHardware
import Foundation

/// `speech:` — spoken prompts on a bedside box with a speaker (off by default): espeak-ng's
/// voice in the wearer's language, its speed, the ALSA device, and the words.
///
/// ```yaml
/// speech:
///   enabled: false
///   voice: en                  # espeak-ng voice / language: en, en-gb, de, fr, es, ...
///   rate: 150                  # words per minute, 80...450
///   device: default            # ALSA device for aplay
///   fall-detected: A fall was detected. Press the button if you are all right.
///   alert-sent: Your helpers have been told.
///   help-coming: "{by} knows and is on the way."
/// ```
public struct SpeechSection: KeyedSection, Codable, Equatable {
    public var enabled = false
    public var settings = SpeechSettings()

    public init() {}

    public static var keys: [ConfigKey<Self>] {
        [.value("enabled", \.enabled), .value("voice", \.settings.voice),
         .value("rate", \.settings.rate, in: 80...450, unit: " words per minute"), .value("device", \.settings.device),
         .value("fall-detected", \.settings.fallDetected), .value("alert-sent", \.settings.alertSent),
         .value("help-coming", \.settings.helpComing)]
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var out: [ConfigProblem] = []
        // Passed to espeak-ng and aplay as single arguments: a voice or device is one plain word.
        for (key, value) in [(\Self.settings.voice, settings.voice), (\.settings.device, settings.device)]
        where value.isEmpty || value.hasPrefix("-") || value.contains(where: { $0.isWhitespace || $0.isNewline }) {
            let at = Self.at(path, key)
            out.append(ConfigProblem(at, "'\(value)' is not a \(at.last!) name (one word, not starting with -)"))
        }
        for (key, value) in [(\Self.settings.fallDetected, settings.fallDetected), (\.settings.alertSent, settings.alertSent),
                             (\.settings.helpComing, settings.helpComing)] where value.count > 300 {
            out.append(ConfigProblem(Self.at(path, key), "at most 300 characters, found \(value.count)"))
        }
        if enabled, !FileManager.default.isExecutableFile(atPath: SpokenPrompts.espeak) {
            out.append(ConfigProblem(Self.at(path, \.enabled), "\(SpokenPrompts.espeak) is not installed (apt install espeak-ng alsa-utils): the prompts will not be heard", severity: .warning))
        }
        return out
    }
}
