import FallGuardConfig
import FallGuardCore
import FallGuardNotify
import Foundation
import Testing
import FallGuardTestSupport

/// A section with secrets, as the channel sections will have.
private struct WebhookSection: ConfigSection, Codable, Equatable {
    var url = ""
    var authToken = ""

    enum CodingKeys: String, CodingKey { case url, authToken = "auth-token" }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        url = try c.decodeIfPresent(String.self, forKey: .url) ?? ""
        authToken = try c.decodeIfPresent(String.self, forKey: .authToken) ?? ""
    }

    func problems(at path: [String]) -> [ConfigProblem] {
        url.hasPrefix("https://") ? [] : [ConfigProblem(path + ["url"], "'\(url)' is not an https:// URL")]
    }
}

private func load(_ dir: TempDirectory, _ yaml: String, environment: [String: String]) -> (ConfigDocument, WebhookSection?, [String]) {
    let file = dir.write("config.yaml", yaml, mode: 0o600)
    var doc = ConfigDocument.load(path: file, environment: environment)
    let hook = doc.section(WebhookSection.self, at: "webhook")
    let lines = doc.finish().map { $0.description.replacingOccurrences(of: dir.path + "/", with: "") }
    return (doc, hook, lines)
}

@Suite("Configuration secrets")
struct ConfigSecretsTests {
    @Test func environmentReferencesAreExpandedAndRedacted() {
        let dir = TempDirectory()
        let (doc, hook, lines) = load(dir, """
            webhook:
              url: https://hooks.example/${HOOK_PATH}
              auth-token: ${HOOK_TOKEN}
            """, environment: ["HOOK_PATH": "abc/def", "HOOK_TOKEN": "s3cr3t-t0ken"])
        #expect(lines == [])
        #expect(hook?.url == "https://hooks.example/abc/def")
        #expect(hook?.authToken == "s3cr3t-t0ken")
        #expect(doc.redactor.redact("sending with s3cr3t-t0ken") == "sending with \(SecretRedactor.mask)")
    }

    @Test func missingEnvironmentVariableIsAProblemNamingTheKey() {
        let dir = TempDirectory()
        let (_, _, lines) = load(dir, """
            webhook:
              url: https://hooks.example/x
              auth-token: ${HOOK_TOKEN}
            """, environment: ["HOOK_EMPTY": ""])
        #expect(lines == ["config.yaml:3: webhook.auth-token: environment variable HOOK_TOKEN is not set"])
        let (_, _, empty) = load(dir, "webhook:\n  url: https://x/y\n  auth-token: ${HOOK_EMPTY}\n", environment: ["HOOK_EMPTY": ""])
        #expect(empty == ["config.yaml:3: webhook.auth-token: environment variable HOOK_EMPTY is empty"])
    }

    @Test func secretsNeverAppearInProblems() {
        let dir = TempDirectory()
        let (_, _, lines) = load(dir, """
            webhook:
              url: ${HOOK_URL}
            """, environment: ["HOOK_URL": "http://user:pa55word@hooks.example"])
        #expect(lines == ["config.yaml:2: webhook.url: '\(SecretRedactor.mask)' is not an https:// URL"])
        #expect(!lines.joined().contains("pa55word"))
    }

    @Test func credentialsFileIsLaidOverTheConfigurationAndItsProblemsPointIntoIt() {
        let dir = TempDirectory()
        let creds = dir.write("credentials.yaml", "# secrets\nwebhook:\n  auth-token: tok-123456\n  url: ftp://nope\n", mode: 0o600)
        let (doc, hook, lines) = load(dir, """
            credentials-file: credentials.yaml
            webhook:
              url: https://hooks.example/x
            """, environment: [:])
        #expect(hook?.authToken == "tok-123456")
        // Everything in the credentials file is a secret, even in its own problems.
        #expect(lines == ["credentials.yaml:4: webhook.url: '\(SecretRedactor.mask)' is not an https:// URL"])
        #expect(doc.redactor.redact("tok-123456") == SecretRedactor.mask)
        #expect(creds.hasSuffix("credentials.yaml"))
    }

    @Test func credentialsFileReadableByOthersIsAWarningWithItsPath() {
        let dir = TempDirectory()
        let creds = dir.write("credentials.yaml", "webhook:\n  auth-token: tok-123456\n", mode: 0o644)
        let (doc, hook, _) = load(dir, "credentials-file: \(creds)\nwebhook:\n  url: https://x/y\n", environment: [:])
        #expect(hook?.authToken == "tok-123456")
        #expect(doc.diagnostics.map(\.description) == [
            "\(creds): warning: credentials-file: the credentials file \(creds) has mode 0644: other users can read the secrets; run chmod 600 \(creds)",
        ])
        #expect(!doc.hasErrors)

        chmod(creds, 0o600)
        let (tight, _, _) = load(dir, "credentials-file: \(creds)\nwebhook:\n  url: https://x/y\n", environment: [:])
        #expect(tight.diagnostics.isEmpty)
    }

    @Test func missingCredentialsFileIsAnError() {
        let dir = TempDirectory()
        let (_, _, lines) = load(dir, "credentials-file: /nonexistent/creds.yaml\n", environment: [:])
        #expect(lines == [
            "config.yaml: webhook.url: '' is not an https:// URL",   // no webhook section: no line
            "config.yaml:1: credentials-file: cannot read the credentials file /nonexistent/creds.yaml: No such file or directory",
        ])
    }

    @Test func clearTextSecretInAReadableConfigurationIsAWarning() {
        let dir = TempDirectory()
        let file = dir.write("config.yaml", "webhook:\n  url: https://x/y\n  auth-token: literal-token\n", mode: 0o644)
        var doc = ConfigDocument.load(path: file, environment: [:])
        _ = doc.section(WebhookSection.self, at: "webhook")
        let all = doc.finish()
        #expect(all.count == 1)
        #expect(all.first?.problem.severity == .warning)
        #expect(all.first?.description.hasPrefix("\(file):3: warning: webhook.auth-token: it is written in clear") == true)
        #expect(doc.redactor.redact("literal-token") == SecretRedactor.mask)

        chmod(file, 0o640)   // as installed: root:fallguard, not readable by others
        var installed = ConfigDocument.load(path: file, environment: [:])
        _ = installed.section(WebhookSection.self, at: "webhook")
        #expect(installed.finish().isEmpty)
    }

    @Test func redactorMasksLongestSecretsFirstShortOnesWhereTheyStandAsAValueAndIgnoresYAMLWords() {
        var r = SecretRedactor(secrets: ["abc", "abcdef", "1", "true"])
        // Short ones only where they stand as a value (issue 28: never an ordinary word).
        #expect(r.redact("x abcdef y abc key=abc") == "x \(SecretRedactor.mask) y abc key=\(SecretRedactor.mask)")
        #expect(r.redact("1 true 10 abcd pin: 1") == "1 true 10 abcd pin: \(SecretRedactor.mask)")
        r.add("zzz")
        #expect(r.redact("zzz") == SecretRedactor.mask)
        #expect(SecretRedactor.isSecretKey("smtp-password"))
        #expect(!SecretRedactor.isSecretKey("username"))
    }
}
