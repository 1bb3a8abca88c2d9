import FallGuardConfig
import FallGuardCore
import Testing

/// Issue 29: every key whose value is one word out of a list is read by one mechanism, and a
/// wrong word is reported as `FILE:LINE: key: expected one of …, found 'x' (did you mean 'y'?)`.
/// Before, `Word<WordList>` keys said "Cannot initialize Bias from invalid String value x",
/// the hand-parsed ones listed the words without a suggestion or not at all.
@Suite struct WordListTests {
    /// A valid configuration with the given words, and more keys in `sensor:`, `gpio:` and `channels:`.
    static func configuration(sensor: String = "", gpio: String = "", channels: String = "", detector: String = "multiphase",
                              log: String = "info") -> String {
        """
        wearer: {name: Margaret}
        contacts: [{name: Anna, phone: "+447700900001"}]
        policy:
          fall: &console {primary: [], others: [], broadcast: [console]}
          help-requested: *console
          resolved: *console
          device-problem: *console
          heartbeat: *console
        detector: {name: \(detector)}
        log: {level: \(log)}
        sensor: {uri: "local:"\(sensor)}
        gpio: {chip: gpiochip0\(gpio)}
        channels:
          console: {type: console}\(channels)
        """
    }

    /// The diagnostics at `key`, as printed.
    static func said(_ yaml: String, at key: String) -> [String] {
        DaemonConfiguration.load(yaml: yaml, path: "config.yaml").1.filter { $0.problem.key == key }.map(\.description)
    }

    @Test func theValidConfigurationHasNoErrors() {
        let errors = DaemonConfiguration.load(yaml: Self.configuration(), path: "config.yaml").1.filter(\.isError)
        #expect(errors.isEmpty, "\(errors)")
    }

    /// `gpio.buzzer.type`, `gpio.button.bias`, a webhook's `body`, an e-mail channel's `security`.
    @Test func theFormerWordListKeysListTheirWordsAndTheClosest() {
        #expect(Self.said(Self.configuration(gpio: ", buzzer: {type: pasive}"), at: "gpio.buzzer.type")
            == ["config.yaml:12: gpio.buzzer.type: expected one of active, passive, found 'pasive' (did you mean 'passive'?)"])
        #expect(Self.said(Self.configuration(gpio: ", button: {bias: pullup}"), at: "gpio.button.bias")
            == ["config.yaml:12: gpio.button.bias: expected one of pull-up, pull-down, disable, as-is, found 'pullup' (did you mean 'pull-up'?)"])
        #expect(Self.said(Self.configuration(channels: "\n  hook: {type: webhook, url: \"https://example.com/h\", body: jsn}"),
                          at: "channels.hook.body")
            == ["config.yaml:15: channels.hook.body: expected one of json, text, found 'jsn' (did you mean 'json'?)"])
        #expect(Self.said(Self.configuration(channels: "\n  mail: {type: email, host: localhost, from: a@example.com, security: startls}"),
                          at: "channels.mail.security")
            == ["config.yaml:15: channels.mail.security: expected one of starttls, tls, none, found 'startls' (did you mean 'starttls'?)"])
    }

    /// `acknowledge-mode`, a channel's `type`, `detector.name` and `sensor.cpu` were read by
    /// hand; `gpio.library` too (it already suggested, in the same words).
    @Test func theFormerlyHandParsedKeysSuggestTheClosestWord() {
        #expect(Self.said(Self.configuration(channels: "\n  mq: {type: mqtt, host: localhost, acknowledge-mode: tokn}"),
                          at: "channels.mq.acknowledge-mode")
            == ["config.yaml:15: channels.mq.acknowledge-mode: expected one of hmac, token, found 'tokn' (did you mean 'token'?)"])
        #expect(Self.said(Self.configuration(channels: "\n  sms: {type: twilio-sm}"), at: "channels.sms.type")
            == ["config.yaml:15: channels.sms.type: expected one of twilio-sms, twilio-call, webhook, exec, console, mqtt, email, modem, ntfy, found 'twilio-sm' (did you mean 'twilio-sms'?)"])
        #expect(Self.said(Self.configuration(detector: "multiphse"), at: "detector.name")
            == ["config.yaml:9: detector.name: expected one of multiphase, sum-abs, per-axis, sixaxis, found 'multiphse' (did you mean 'multiphase'?)"])
        #expect(Self.said(Self.configuration(sensor: ", cpu: lst"), at: "sensor.cpu")
            == ["config.yaml:11: sensor.cpu: expected one of last, any or a CPU number, found 'lst' (did you mean 'last'?)"])
        #expect(Self.said(Self.configuration(gpio: ", library: autp"), at: "gpio.library")
            == ["config.yaml:12: gpio.library: expected one of auto, v1, v2, found 'autp' (did you mean 'auto'?)"])
    }

    /// `sensor.mode` and `log.level` (formerly `ConfigChoice`) say what they said.
    @Test func theFormerChoiceKeysSayWhatTheySaid() {
        #expect(Self.said(Self.configuration(sensor: ", mode: bufered"), at: "sensor.mode")
            == ["config.yaml:11: sensor.mode: expected one of auto, buffered, polled, found 'bufered' (did you mean 'buffered'?)"])
        #expect(Self.said(Self.configuration(log: "inf"), at: "log.level")
            == ["config.yaml:10: log.level: expected one of trace, debug, info, notice, warning, error, critical, found 'inf' (did you mean 'info'?)"])
    }

    /// Every word of every list reads as its value and is written back as itself.
    @Test func everyWordIsReadAndWrittenBack() {
        let yaml = Self.configuration(
            sensor: ", mode: polled, cpu: last", gpio: ", library: v2, buzzer: {type: passive}, button: {bias: as-is}",
            channels: "\n  hook: {type: webhook, url: \"https://example.com/h\", body: text}"
                + "\n  mail: {type: email, host: localhost, from: a@example.com, security: tls}", detector: "per-axis", log: "debug")
        let (c, diagnostics) = DaemonConfiguration.load(yaml: yaml, path: "config.yaml")
        #expect(diagnostics.filter(\.isError).isEmpty, "\(diagnostics)")
        #expect(c.sensor.mode == .polled && c.sensor.cpu == .last && c.log.level == .debug && c.detector.name == "per-axis")
        #expect(c.gpio.library == .v2 && c.gpio.wiring.buzzer.type == .passive && c.gpio.wiring.button.bias == .asIs)
    }
}
