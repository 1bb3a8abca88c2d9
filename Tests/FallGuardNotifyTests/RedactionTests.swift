import FallGuardCore
import Foundation
@testable import FallGuardNotify
import Testing
import FallGuardTestSupport

/// A channel that answers with fixed texts, to see what the redactor leaves of them.
private struct QuotingChannel: NotificationChannel {
    let name = "hook"
    let text: String
    let fails: Bool

    func send(_ delivery: Delivery) async throws -> DeliveryReceipt {
        if fails { throw DeliveryFailure.permanent(text) }
        return DeliveryReceipt(providerID: text, detail: text)
    }
}

/// Issue 14: one redactor, applied wherever a channel's text leaves the process.
@Suite struct RedactionTests {
    static let ntfy = "https://ntfy.sh/margaret-falls-7f3a"
    static let homeAssistant = "http://ha.lan:8123/api/webhook/ha-webhook-id-123?token=q1w2e3r4"

    @Test func shortSecretsAreMaskedWhereTheyStandAloneAndLongOnesAnywhere() {
        let m = SecretRedactor.mask
        let r = SecretRedactor(secrets: ["ab", "7", "longsecret", "true"])
        #expect(r.redact("pass=ab, pin: 7; table 17 x7 longsecretly") == "pass=\(m), pin: \(m); table 17 x7 \(m)ly")
        #expect(r.redact("true") == "true", "YAML words are not secrets")
        #expect(SecretRedactor(secrets: ["p@ss word!"]).redact("https://u:p%40ss%20word%21@host") == "https://u:\(m)@host")
        #expect(SecretRedactor(secrets: ["p@ss-word"]).redact("https://u:p%40ss-word@host") == "https://u:\(m)@host")
    }

    /// Issue 28: a short password (`mqtt`) is hidden where it stands as a value, never in the
    /// ordinary words of a line (the logger label `fallguard.mqtt`, a URL's scheme).
    @Test func shortSecretsDoNotDestroyOrdinaryWords() {
        let m = SecretRedactor.mask
        let r = SecretRedactor(secrets: ["mqtt"])
        #expect(r.redact("fallguard.mqtt: connected to mqtt://broker as fallguard-pi, mqtt bridge up")
                == "fallguard.mqtt: connected to mqtt://broker as fallguard-pi, mqtt bridge up")
        #expect(r.redact("password=mqtt user:mqtt@host 'mqtt' key: mqtt") == "password=\(m) user:\(m)@host '\(m)' key: \(m)")
        #expect(r.redact("mqtt") == m)
    }

    /// Issue 28 item 7: a secret anywhere in a URL (a Telegram bot token before `/sendMessage`,
    /// a Slack path, a user name standing for a token, a query value) is a secret.
    @Test func everySecretPartOfAURLIsASecretWhereverItStands() {
        let telegram = "https://api.telegram.org/bot123456789:AAHk-Secret_tok3n/sendMessage?chat_id=987654321"
        let parts = SecretRedactor.secrets(inURL: telegram, path: true)
        #expect(parts.contains("bot123456789:AAHk-Secret_tok3n") && parts.contains("987654321"), "\(parts)")
        #expect(!parts.contains("api"))
        let slack = SecretRedactor.secrets(inURL: "https://hooks.slack.com/services/T0001/B0002/XXXXabcd", path: true)
        #expect(slack == ["T0001", "B0002", "XXXXabcd"])
        #expect(SecretRedactor.secrets(inURL: "https://ghp_tokenvalue123@example.org/x", path: false) == ["ghp_tokenvalue123"])
        let r = SecretRedactor(secrets: WebhookOptions(url: telegram).secrets)
        let said = r.redact("POST \(telegram) answered 401; token bot123456789:AAHk-Secret_tok3n refused")
        #expect(!said.contains("AAHk-Secret_tok3n") && !said.contains("987654321") && said.contains("api.telegram.org"), "\(said)")
    }

    /// A webhook to the loopback receiver at `path`, sent by `fallguard test-alert` and through
    /// the outbox: what test-alert printed and the receipt the outbox stored.
    func webhookOutputs(path: String) async throws -> (printed: String, receipt: String?) {
        let receiver = try Receiver()
        var settings = testSettings(receiver)
        settings.channels["hook"] = WebhookOptions(url: receiver.base + path)
        let json = try writeSettings(settings, to: temporaryFolder())
        let printed = try runFallguard(["test-alert", "--settings-json", json, "--channel", "hook"])
        #expect(printed.status == 0 && printed.output.contains("hook: sent"), "\(printed.output)")
        let outbox = try Outbox(path: temporaryFolder() + "/outbox.sqlite", settings: settings)
        try outbox.enqueue(fallAlert("FG-9"))
        let drained = try await withWorker(outbox) {
            try await until { try outbox.deliveries().contains { $0.channel == "hook" && $0.state == .sent } }
        }
        #expect(drained)
        let row = try #require(try outbox.deliveries().first { $0.channel == "hook" })
        return (printed.output, row.receipt)
    }

    /// The Telegram URL's token, through test-alert and the outbox's receipt, as in the issue.
    @Test func aTokenInTheMiddleOfAWebhookPathIsInNoOutput() async throws {
        let (printed, receipt) = try await webhookOutputs(path: "/bot123456789:AAHk-Secret_tok3n/sendMessage?chat_id=987654321")
        #expect(!printed.contains("AAHk-Secret_tok3n") && !printed.contains("987654321"), "\(printed)")
        #expect(receipt?.contains("AAHk-Secret_tok3n") == false && receipt?.contains(SecretRedactor.mask) == true, "\(receipt ?? "")")
    }

    @Test func urlsGiveUpTheirSecretParts() {
        #expect(SecretRedactor.secrets(inURL: "https://fg:pa55@mail.example.org/x", path: false) == ["pa55", "fg:pa55"])
        #expect(SecretRedactor.secrets(inURL: Self.ntfy, path: true) == ["margaret-falls-7f3a"])
        #expect(SecretRedactor.secrets(inURL: Self.homeAssistant, path: true) == ["ha-webhook-id-123", "q1w2e3r4"])
        #expect(SecretRedactor.secrets(inURL: "not a url", path: true) == [])
        let hook = WebhookOptions(url: Self.ntfy, secret: "s3cret-key", headers: ["Authorization": "Bearer tk_live_123", "Priority": "urgent"])
        #expect(Set(hook.secrets) == ["s3cret-key", "margaret-falls-7f3a", "Bearer tk_live_123", "tk_live_123"])
        let twilio = TwilioAccount(accountSID: "AC1", authToken: "tok-9", from: "+15005550006", baseURL: "https://u:pw@api.example")
        #expect(twilio.secrets == ["tok-9", "pw", "u:pw"])
    }

    @Test func aChannelsReceiptsAndFailuresAreRedacted() async throws {
        let options = WebhookOptions(url: Self.homeAssistant)
        let text = "\(Self.homeAssistant) answered HTTP 403"
        let quiet = "http://ha.lan:8123/api/webhook/\(SecretRedactor.mask)?token=\(SecretRedactor.mask) answered HTTP 403"
        let receipt = try await options.redacting(QuotingChannel(text: text, fails: false)).send(delivery(channel: "hook", to: nil))
        #expect(receipt.detail == quiet && receipt.providerID == quiet)
        await #expect(throws: DeliveryFailure.permanent(quiet)) {
            try await options.redacting(QuotingChannel(text: text, fails: true)).send(delivery(channel: "hook", to: nil))
        }
    }

    /// The webhook's receipt quotes its URL; the outbox keeps it and test-alert prints it.
    @Test func theOutboxAndTestAlertKeepNoWebhookId() async throws {
        let (printed, receipt) = try await webhookOutputs(path: "/api/webhook/ha-webhook-id-123")
        #expect(!printed.contains("ha-webhook-id-123"), "\(printed)")
        #expect(receipt?.contains(SecretRedactor.mask) == true && receipt?.contains("ha-webhook-id-123") == false, "\(receipt ?? "")")
    }
}

/// The redactor's percent-encodings, written without Foundation's character sets, encode as
/// Foundation's `addingPercentEncoding(withAllowedCharacters:)` does.
@Suite struct PercentEncodingTests {
    @Test func theThreeSetsEncodeAsFoundationsDo() {
        let sets: [(CharacterSet, (Unicode.Scalar) -> Bool)] = [
            (.alphanumerics, SecretRedactor.isAlphanumeric), (.urlPasswordAllowed, SecretRedactor.urlPasswordAllowed),
            (.urlQueryAllowed, SecretRedactor.urlQueryAllowed)]
        var texts = ["", "plain", "p@ss:w/rd?x=1&y=2#f", "100% sure", "sp ace", "tab\there", "ünïcødé", "ß", "中文密码", "🔑key",
                     "e\u{301}", "٣٤", "Ⅻ", "½", "a\u{0}b", "\u{7F}\u{80}\u{FF}", "[]{}|\\^`\"<>", "~-._!$&'()*+,;="]
        texts.append(String((0..<128).compactMap { Unicode.Scalar($0) }.map(Character.init)))
        for (set, keep) in sets {
            for text in texts {
                #expect(percentEncoded(text, keeping: keep) == text.addingPercentEncoding(withAllowedCharacters: set), "\(text)")
            }
            if set == .alphanumerics {   // Twilio's form bodies: the unreserved characters as Foundation kept them
                var unreserved = CharacterSet.alphanumerics
                unreserved.insert(charactersIn: "-._~")
                for text in texts {
                    #expect(HTTPDelivery.formEncoded([(text, text)])
                            == "\(text.addingPercentEncoding(withAllowedCharacters: unreserved)!)=\(text.addingPercentEncoding(withAllowedCharacters: unreserved)!)")
                }
            }
            for v in 0..<0x3000 {   // every scalar of the first planes' common blocks, one by one
                // CoreFoundation's tables stop at Unicode 15; the standard library also knows the
                // letters and marks added since (Unicode 16, 2024: 41 of them below U+3000).
                guard let scalar = Unicode.Scalar(v), (scalar.properties.age?.major ?? 0) < 16 else { continue }
                #expect(keep(scalar) == set.contains(scalar), "U+\(String(v, radix: 16))")
            }
        }
    }
}

