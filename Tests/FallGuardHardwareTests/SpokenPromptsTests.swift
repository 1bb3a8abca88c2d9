import FallGuardCore
import FallGuardHardware
import FallGuardTestSupport
import Foundation
import Testing

/// The bedside box's spoken prompts: which words for which alarm effects, and the words as
/// espeak-ng speaks them, rendered to WAV and measured with sox (length and level).
@Suite struct SpokenPromptsTests {
    static let installed = FileManager.default.isExecutableFile(atPath: SpokenPrompts.espeak)
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/sox")

    @Test func theAlarmsEffectsChooseTheWords() {
        let s = SpeechSettings()
        let fall = IncidentEvent(time: 1, incident: "FG-1", event: .fallSuspected, detail: "")
        #expect(s.prompt(for: [.sound(.countdown), .record(fall)]) == s.fallDetected)
        #expect(s.prompt(for: [.record(IncidentEvent(time: 2, incident: "FG-1", event: .alertDelivered, detail: ""))]) == s.alertSent)
        let ack = Alert(kind: .acknowledged, incident: "FG-1", time: 3, acknowledgedBy: "Anna (SMS reply)")
        #expect(s.prompt(for: [.dispatch(ack), .sound(.helpComing)]) == "Anna knows and is on the way.")
        let unnamed = Alert(kind: .acknowledged, incident: "FG-1", time: 3)
        #expect(s.prompt(for: [.dispatch(unnamed)]) == "A helper knows and is on the way.")
        #expect(s.prompt(for: [.sound(.alertActive), .indicator(.alertOut)]) == nil, "nothing else is spoken")
        let german = SpeechSettings(voice: "de", helpComing: "{by} weiß Bescheid und ist unterwegs.")
        #expect(german.prompt(for: [.dispatch(ack)]) == "Anna weiß Bescheid und ist unterwegs.")
    }

    /// `sox FILE -n stat`: (seconds, RMS amplitude, maximum amplitude).
    static func measure(_ wav: String) throws -> (length: Double, rms: Double, max: Double) {
        let out = try runCommand("/usr/bin/sox", [wav, "-n", "stat"])
        func value(_ label: String) -> Double? {
            out.stderr.split(separator: "\n").first { $0.hasPrefix(label) }
                .flatMap { $0.split(separator: ":").last.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } }
        }
        return (value("Length (seconds)") ?? 0, value("RMS     amplitude") ?? 0, value("Maximum amplitude") ?? 0)
    }

    @Test(.enabled(if: installed, "espeak-ng and sox are not installed (tools/setup-debian installs them)"))
    func eachPromptIsSpokenAudiblyAndAtALengthThatFitsItsWords() throws {
        let dir = TempDirectory("speech")
        for (voice, text) in [("en", SpeechSettings().fallDetected), ("en", SpeechSettings().alertSent),
                              ("en", "Anna knows and is on the way."), ("de", "Anna weiß Bescheid und ist unterwegs.")] {
            let speech = SpokenPrompts(settings: SpeechSettings(voice: voice, rate: 150))
            let wav = dir.path + "/prompt.wav"
            try speech.render(text, to: wav)
            let m = try Self.measure(wav)
            let words = Double(text.split(separator: " ").count)
            // 150 words a minute is 0.4 s a word; espeak-ng adds pauses at full stops.
            print("\(voice) \"\(text)\": \(String(format: "%.2f", m.length)) s, RMS \(m.rms), max \(m.max)")
            #expect(m.length > words * 0.2 && m.length < words * 0.8 + 1, "\(text): \(m.length) s for \(Int(words)) words")
            #expect(m.rms > 0.02, "audible: RMS \(m.rms)")
            #expect(m.max <= 1.0)
        }
        // Faster speech is shorter: the rate reaches espeak-ng.
        let slow = dir.path + "/slow.wav", fast = dir.path + "/fast.wav"
        try SpokenPrompts(settings: SpeechSettings(rate: 100)).render(SpeechSettings().fallDetected, to: slow)
        try SpokenPrompts(settings: SpeechSettings(rate: 300)).render(SpeechSettings().fallDetected, to: fast)
        let (fastLength, slowLength) = (try Self.measure(fast).length, try Self.measure(slow).length)
        #expect(fastLength < slowLength * 0.6, "300 wpm: \(fastLength) s, 100 wpm: \(slowLength) s")
    }

    @Test(.enabled(if: installed, "espeak-ng and sox are not installed (tools/setup-debian installs them)"))
    func textThatLooksLikeAnOptionIsSpokenNotObeyed() throws {
        let dir = TempDirectory("speech")
        let wav = dir.path + "/dash.wav"
        try SpokenPrompts(settings: SpeechSettings()).render("-w /tmp/elsewhere.wav --version", to: wav)
        #expect(try Self.measure(wav).length > 1)
    }
}
