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
public struct SpeechSection: ConfigSection, Codable, Equatable {
    public var enabled = false
    public var settings = SpeechSettings()

    public init() {}

    enum CodingKeys: String, CodingKey {
        case enabled, voice, rate, device, fallDetected = "fall-detected", alertSent = "alert-sent", helpComing = "help-coming"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = SpeechSettings()
        enabled = try c.value(.enabled, default: false)
        settings = SpeechSettings(voice: try c.value(.voice, default: d.voice), rate: try c.value(.rate, default: d.rate),
                                  device: try c.value(.device, default: d.device),
                                  fallDetected: try c.value(.fallDetected, default: d.fallDetected),
                                  alertSent: try c.value(.alertSent, default: d.alertSent),
                                  helpComing: try c.value(.helpComing, default: d.helpComing))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(enabled, forKey: .enabled)
        try c.encode(settings.voice, forKey: .voice)
        try c.encode(settings.rate, forKey: .rate)
        try c.encode(settings.device, forKey: .device)
        try c.encode(settings.fallDetected, forKey: .fallDetected)
        try c.encode(settings.alertSent, forKey: .alertSent)
        try c.encode(settings.helpComing, forKey: .helpComing)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var out: [ConfigProblem] = []
        if !(80...450).contains(settings.rate) {
            out.append(ConfigProblem(path + ["rate"], "must be 80 to 450 words per minute, found \(settings.rate)"))
        }
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
