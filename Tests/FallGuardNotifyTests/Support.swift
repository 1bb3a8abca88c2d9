import AsyncHTTPClient
import FallGuardCore
import Foundation
@testable import FallGuardNotify
import FallGuardTestSupport

func twilioAccount(_ receiver: Receiver, token: String = twilioToken) -> TwilioAccount {
    TwilioAccount(accountSID: twilioSID, authToken: token, from: "+15005550006", baseURL: receiver.base, timeout: 5)
}

let anna = Recipient(name: "Anna", phone: "+447700900001", email: "anna@example.org")
let ben = Recipient(name: "Ben", phone: "+447700900002")
let cara = Recipient(name: "Cara", phone: "+447700900003")

/// Settings with `sms`, `call` and a signed `hook` webhook on `receiver`, three contacts, fast retries.
func testSettings(_ receiver: Receiver, contacts: [Recipient] = [anna, ben, cara], acknowledgeWithin: Double = 300) -> NotificationSettings {
    var policy = NotificationPolicy(acknowledgeWithin: acknowledgeWithin, retry: RetrySettings(initial: 0.05, max: 0.2, jitter: 0.5))
    policy.fall.broadcast = ["hook"]
    return NotificationSettings(
        device: "bridge-test", wearer: Wearer(name: "Margaret", location: "Flat 3, 12 Mill Lane"), contacts: contacts,
        channels: ["sms": TwilioSMSOptions(account: twilioAccount(receiver)),
                   "call": TwilioCallOptions(account: twilioAccount(receiver)),
                   "hook": WebhookOptions(url: receiver.base + "/hook", secret: "s3cret")],
        policy: policy)
}

let sampleFall = FallSuspected(detector: "multiphase", impactTime: 100, decisionTime: 102.5, peak: 3.4,
                               phases: ["impact", "posture-change", "stillness"],
                               features: [DetectionFeature("peak", 3.4, "g"), DetectionFeature("tilt", 72, "deg")])

func fallAlert(_ incident: String = "FG-1") -> Alert {
    Alert(kind: .fall, incident: incident, time: 130, fall: sampleFall)
}

/// An HTTP client for one test, shut down by `body`'s end.
func withHTTPClient<T>(_ body: (HTTPClient) async throws -> T) async throws -> T {
    let client = HTTPClient(eventLoopGroupProvider: .singleton,
                            configuration: .init(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(3))))
    do {
        let v = try await body(client)
        try await client.shutdown()
        return v
    } catch {
        try? await client.shutdown()
        throw error
    }
}

func channelContext(_ client: HTTPClient) -> ChannelContext {
    ChannelContext(httpClient: client, write: { _ in })
}

func delivery(channel: String, to recipient: Recipient?, key: String = "FG-1.fall.abc.p0.sms") -> Delivery {
    let message = RenderedMessage(subject: "Fall alert: Margaret", body: "FALL ALERT: Margaret may have fallen & needs help <now>.")
    return Delivery(channel: channel, recipient: recipient, payload: AlertPayload(
        idempotencyKey: key, test: false, device: "bridge-test", wearer: Wearer(name: "Margaret", location: "Flat 3"),
        alert: fallAlert(), message: message, sentAt: "2026-11-22T10:00:00Z"))
}

/// Runs a delivery worker for `outbox` while `body` runs.
func withWorker<T>(_ outbox: Outbox, _ body: () async throws -> T) async throws -> T {
    try await withHTTPClient { client in
        let worker = DeliveryWorker(outbox: outbox, channels: try outbox.settings.makeChannels(context: channelContext(client)))
        let task = Task { await worker.run() }
        defer { task.cancel() }
        let v = try await body()
        task.cancel()
        await task.value
        return v
    }
}
