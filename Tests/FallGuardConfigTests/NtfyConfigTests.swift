@testable import FallGuardConfig
import FallGuardNotify
import Foundation
import Testing
import FallGuardTestSupport

/// `type: ntfy` in a file: its keys, its checks, and `check-config`'s exit status.
@Suite struct NtfyConfigTests {
    private func file(_ channel: String) -> String {
        """
        wearer: {name: Margaret}
        contacts: [{name: Anna, phone: "+447700900123"}]
        channels:
          push: \(channel)

        """ + policyBroadcastingTo("push")
    }

    @Test func aTopicIsReadWithItsDefaults() throws {
        let (c, diagnostics) = DaemonConfiguration.load(yaml: file("{type: ntfy, topic: margaret-falls-7f3a}"), path: "c.yaml", environment: [:])
        #expect(diagnostics.filter(\.isError).isEmpty, "\(diagnostics)")
        let push = try #require(c.notify.settings?.channels["push"] as? NtfyOptions)
        #expect(push == NtfyOptions(server: "https://ntfy.sh", topic: "margaret-falls-7f3a", token: "", timeout: 10))
        // The topic is a password: the file's redactor masks it.
        #expect(!c.redactor.redact("posted to https://ntfy.sh/margaret-falls-7f3a").contains("margaret-falls-7f3a"))
    }

    @Test func aShortTopicAndATokenInClearAreRefusedWithExit78() throws {
        let dir = TempDirectory("ntfy")
        let path = dir.write("config.yaml", file("{type: ntfy, topic: abc, server: \"http://ntfy.example.org\", token: tk_abc}"))
        let (_, diagnostics) = DaemonConfiguration.load(path: path, environment: [:])
        let lines = diagnostics.map { $0.description.replacingOccurrences(of: dir.path + "/", with: "") }
        #expect(lines.contains { $0.hasPrefix("config.yaml:4: channels.push.topic: 'abc' is not a topic of 8 to 64") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("config.yaml:4: channels.push.server: would send the token in clear text to ntfy.example.org") }, "\(lines)")
        let checked = try fallguard(["check-config", "--no-hardware", "--config", path])
        #expect(checked.status == 78, "\(checked.stdout)\(checked.stderr)")
    }
}
