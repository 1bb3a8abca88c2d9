import AsyncHTTPClient
import FallGuardCore
import Foundation
import Testing
@testable import FallGuardNotify
import FallGuardTestSupport

/// `type: ntfy` against a real HTTP server on loopback (tools/notify-receiver).
@Suite struct NtfyChannelTests {
    private func send(_ options: NtfyOptions, kind: AlertKind = .fall, test: Bool = false) async throws -> DeliveryReceipt {
        var d = delivery(channel: "push", to: nil)
        d.payload.alert = Alert(kind: kind, incident: "FG-1", time: 130, fall: kind == .fall ? sampleFall : nil)
        d.payload.test = test
        return try await withHTTPClient { client in
            try await options.makeChannel(named: "push", context: channelContext(client)).send(d)
        }
    }

    @Test func aFallIsAnUrgentPostOfTheTextToTheTopic() async throws {
        let receiver = try Receiver()
        let receipt = try await send(NtfyOptions(server: receiver.base + "/", topic: "margaret-falls-7f3a", token: "tk_abc123"))
        let r = try #require(receiver.requests.first)
        #expect(r.method == "POST" && r.path == "/margaret-falls-7f3a")
        #expect(r.body == "FALL ALERT: Margaret may have fallen & needs help <now>.")
        #expect(r.header("Title") == "Fall alert: Margaret")
        #expect(r.header("Priority") == "urgent" && r.header("Tags") == "rotating_light")
        #expect(r.header("Authorization") == "Bearer tk_abc123")
        // The topic is a password in ntfy: the receipt (logged, shown on the page) does not show it.
        #expect(receipt.detail.contains("answered HTTP 200") && !receipt.detail.contains("margaret-falls-7f3a"), "\(receipt.detail)")
    }

    @Test func thePriorityFollowsTheSeverity() async throws {
        let receiver = try Receiver()
        let options = NtfyOptions(server: receiver.base, topic: "margaret-falls-7f3a")
        _ = try await send(options, kind: .deviceProblem)
        _ = try await send(options, kind: .acknowledged)
        _ = try await send(options, kind: .fall, test: true)
        let r = receiver.requests
        #expect(r.map { $0.header("Priority") } == ["high", "default", "default"])
        #expect(r.map { $0.header("Tags") } == ["warning", "information_source", "test_tube"])
        #expect(r.allSatisfy { $0.header("Authorization") == nil })
    }

    @Test func aBusyOrDownServerIsATransientFailure() async throws {
        func failure(_ server: String) async -> DeliveryFailure? {
            do {
                _ = try await send(NtfyOptions(server: server, topic: "margaret-falls-7f3a"))
                return nil
            } catch { return error as? DeliveryFailure }
        }
        let flaky = try Receiver(["--fail-first", "1"])
        guard case .transient(let busy)? = await failure(flaky.base) else { Issue.record("503"); return }
        #expect(busy.contains("503") && !busy.contains("margaret-falls-7f3a"), "\(busy)")
        #expect(await failure(flaky.base) == nil, "the retry goes through")
        let down = try Receiver()
        down.stop()
        guard case .transient? = await failure(down.base) else { Issue.record("refused"); return }
    }
}
