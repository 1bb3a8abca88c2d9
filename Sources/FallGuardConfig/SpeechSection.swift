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
        for (key, value) in [("voice", settings.voice), ("device", settings.device)]
        where value.isEmpty || value.hasPrefix("-") || value.contains(where: { $0.isWhitespace || $0.isNewline }) {
            out.append(ConfigProblem(path + [key], "'\(value)' is not a \(key) name (one word, not starting with -)"))
        }
        for (key, value) in [("fall-detected", settings.fallDetected), ("alert-sent", settings.alertSent),
                             ("help-coming", settings.helpComing)] where value.count > 300 {
            out.append(ConfigProblem(path + [key], "at most 300 characters, found \(value.count)"))
        }
        if enabled, !FileManager.default.isExecutableFile(atPath: SpokenPrompts.espeak) {
            out.append(ConfigProblem(path + ["enabled"], "\(SpokenPrompts.espeak) is not installed (apt install espeak-ng alsa-utils): the prompts will not be heard", severity: .warning))
        }
        return out
    }
}
