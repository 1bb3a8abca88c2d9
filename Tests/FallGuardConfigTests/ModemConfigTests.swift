@testable import FallGuardConfig
import FallGuardNotify
import Foundation
import Testing
import FallGuardTestSupport

/// Issue 36: the `modem` channel's keys and the `fallback` of `twilio-sms`/`twilio-call`.
@Suite struct ModemConfigTests {
    static func load(_ channels: String) -> (DaemonConfiguration, [String]) {
        let (c, d) = diagnose(channels)
        return (c, d.map(\.description))
    }

    static func diagnose(_ channels: String) -> (DaemonConfiguration, [ConfigDiagnostic]) {
        DaemonConfiguration.load(yaml: """
            wearer: {name: W}
            contacts: [{name: A, phone: "+447700900001"}]
            channels:
            \(channels)
            """, path: "config.yaml")
    }

    static let sms = #"  sms: {type: twilio-sms, account-sid: AC0123456789abcdef0123456789abcdef, auth-token: tok-123456, from: "+15005550006""#

    @Test func aModemAsTheFallbackOfSMSAndCall() throws {
        let (c, found) = Self.diagnose("""
            \(Self.sms), fallback: modem, fallback-after: 20}
              call: {type: twilio-call, account-sid: AC0123456789abcdef0123456789abcdef, auth-token: tok-123456, from: "+15005550006", fallback: modem-call}
              modem: {type: modem, modem: "0", timeout: 10, poll-interval: 3}
              modem-call: {type: modem, mode: call, ring-timeout: 30, answered-for: 5}
            """)
        #expect(!found.contains { $0.isError }, "\(found)")
        let channels = try #require(c.notify.settings?.channels)
        let sms = try #require(channels["sms"] as? TwilioSMSOptions)
        #expect(sms.fallback == "modem" && sms.fallbackAfter == 20)
        #expect((channels["call"] as? TwilioCallOptions)?.fallbackAfter == 30, "the default")
        let modem = try #require(channels["modem"] as? ModemOptions)
        #expect(modem.mode == .sms && modem.manager.modem == "0" && modem.manager.timeout == 10 && modem.pollInterval == 3)
        let call = try #require(channels["modem-call"] as? ModemOptions)
        #expect(call.mode == .call && call.ringTimeout == 30 && call.answeredFor == 5)
    }

    @Test func misspeltKeysWrongWordsAndBadFallbacksAreNamedWithTheirLine() {
        let (_, lines) = Self.load("""
            \(Self.sms), fallbak: modem}
              modem: {type: modem, mdoe: sms, ring-timeout: 1}
            """)
        #expect(lines.contains("config.yaml:4: channels.sms.fallbak: unknown key 'fallbak' (did you mean 'fallback'?)"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("config.yaml:5: channels.modem.mdoe: unknown key 'mdoe' (did you mean 'mode'?)") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("config.yaml:5: channels.modem.ring-timeout:") && $0.contains("outside") }, "\(lines)")
        let (_, word) = Self.load("""
              modem: {type: modem, mode: fax}
            """)
        #expect(word.contains { $0.hasPrefix("config.yaml:4: channels.modem.mode:") && $0.contains("sms") }, "\(word)")
        let (_, unknown) = Self.load("""
            \(Self.sms), fallback: modme}
              modem: {type: modem}
            """)
        #expect(unknown.contains { $0.contains("channels.sms.fallback: unknown channel 'modme'") }, "\(unknown)")
        let (_, itself) = Self.load("""
            \(Self.sms), fallback: sms}
            """)
        #expect(itself.contains { $0.contains("channels.sms.fallback: a channel cannot be its own fallback") }, "\(itself)")
        let (_, broadcast) = Self.load("""
            \(Self.sms), fallback: hook}
              hook: {type: console}
            """)
        #expect(broadcast.contains { $0.contains("channel 'hook' does not send to a phone") }, "\(broadcast)")
    }

    /// `check-config` exits 78 on a malformed modem channel, and warns (exit 0) when the modem
    /// cannot send now: the real `mmcli` against the ModemManager mock.
    @Test(.disabled(if: modemMockMissing != nil)) func checkConfigSaysWhatStopsTheModem() throws {
        let dir = TempDirectory("modem-config")
        let bad = dir.write("bad.yaml", """
            wearer: {name: W}
            contacts: [{name: A, phone: "+447700900001"}]
            channels:
              modem: {type: modem, poll-intervall: 3}
            policy:
              fall: {primary: [modem]}
            """)
        let refused = try fallguard(["check-config", "--no-hardware", "--config", bad])
        #expect(refused.status == 78 && refused.stderr.contains("did you mean 'poll-interval'?"), "\(refused.stdout)\(refused.stderr)")
        let mock = try ModemManagerMock(sim: "missing")
        let good = dir.write("good.yaml", """
            gpio: {enabled: false}
            wearer: {name: W}
            contacts: [{name: A, phone: "+447700900001"}]
            channels:
              modem: {type: modem}
            policy:
              fall: {primary: [modem], others: []}
              help-requested: {primary: [modem], others: []}
              resolved: {primary: [modem], others: []}
              device-problem: {primary: [modem], others: []}
              heartbeat: {primary: [modem], others: []}
            """)
        let warned = try fallguard(["check-config", "--config", good], environment: ["DBUS_SYSTEM_BUS_ADDRESS": mock.address])
        #expect(warned.status == 0, "\(warned.stdout)\(warned.stderr)")
        #expect(warned.stderr.contains("channels.modem: the modem cannot send now: the modem has no SIM card"), "\(warned.stderr)")
        try mock.set(sim: "present")
        let fine = try fallguard(["check-config", "--config", good], environment: ["DBUS_SYSTEM_BUS_ADDRESS": mock.address])
        #expect(fine.status == 0 && !fine.stderr.contains("modem"), "\(fine.stdout)\(fine.stderr)")
    }
}
