import FallGuardCore
@testable import FallGuardEmail
import FallGuardNotify
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
import FallGuardTestSupport
#endif

let alertBody = """
    Margaret may have fallen at 10:42 (incident FG-7).
    Where: Flat 3, 12 Mill Lane; key safe code with Anna. Café ☕
    .a line that starts with a dot
    A very long line that goes on and on beyond the seventy-six characters quoted-printable allows per line, with trailing space 
    """

func delivery(to address: String? = "anna@example.org", key: String = UUID().uuidString, test: Bool = false) -> Delivery {
    Delivery(channel: "email", recipient: Recipient(name: "Zoë Smith", phone: "+447700900123", email: address),
             payload: AlertPayload(idempotencyKey: key, test: test, device: "bedroom",
                                   wearer: Wearer(name: "Margaret", location: "Flat 3, 12 Mill Lane"),
                                   alert: Alert(kind: .fall, incident: "FG-7", time: 42),
                                   message: RenderedMessage(subject: "Fall: Margaret needs help — 10:42", body: alertBody),
                                   sentAt: "2026-11-22T10:42:00+00:00"))
}

func settings(_ port: Int, _ security: SMTPSecurity, user: String? = nil, password: String? = nil,
              timeout: Double = 10) -> EmailChannelSettings {
    EmailChannelSettings(host: "127.0.0.1", port: port, security: security, username: user, password: password,
                         from: "fallguard@example.org", caFile: security == .none ? nil : testCertificate.cert,
                         connectTimeout: min(timeout, 5), timeout: timeout)
}

func expectFailure(_ channel: EmailChannel, _ d: Delivery, permanent: Bool, mentioning text: String? = nil) async {
    do {
        _ = try await channel.send(d)
        Issue.record("delivered, expected a \(permanent ? "permanent" : "transient") failure")
    } catch let failure as DeliveryFailure {
        switch failure {
        case .permanent(let why): #expect(permanent, "\(why)"); if let text { #expect(why.contains(text), "\(why)") }
        case .transient(let why): #expect(!permanent, "\(why)"); if let text { #expect(why.contains(text), "\(why)") }
        }
    } catch {
        Issue.record("not a DeliveryFailure: \(error)")
    }
}

@Suite(.enabled(if: smtpSinkMissing == nil && opensslMissing == nil, "\(smtpSinkMissing ?? opensslMissing ?? "")"))
struct EmailChannelTests {
    @Test func plainDeliveryCarriesTheHeadersAndTheBody() async throws {
        let sink = try await SMTPSink()
        let channel = EmailChannel(settings: settings(sink.port, .none))
        let d = delivery(key: "key-123")
        let receipt = try await channel.send(d)
        let mail = try await sink.mail()

        #expect(mail.mail_from == "fallguard@example.org")
        #expect(mail.rcpt_tos == ["anna@example.org"])
        #expect(!mail.tls && mail.login == nil)
        #expect(mail.headers["Subject"] == "Fall: Margaret needs help — 10:42")
        #expect(mail.headers["From"] == "FallGuard <fallguard@example.org>")
        #expect(mail.headers["To"] == "Zoë Smith <anna@example.org>")
        #expect(mail.headers["Message-ID"] == "<fallguard.key-123@example.org>")
        #expect(receipt.providerID == "<fallguard.key-123@example.org>")
        #expect(mail.headers["X-FallGuard-Idempotency-Key"] == "key-123")
        #expect(mail.headers["X-FallGuard-Incident"] == "FG-7")
        #expect(mail.headers["X-FallGuard-Test"] == nil)
        #expect(mail.content_type == "text/plain" && mail.charset == "utf-8")
        #expect(mail.date_parsed != nil, "Date parses as RFC 5322")
        #expect(mail.defects.isEmpty, "\(mail.defects)")
        #expect(mail.body.replacingOccurrences(of: "\r\n", with: "\n") == alertBody + "\n")
        #expect(mail.raw.split(separator: "\r\n").allSatisfy { $0.utf8.count <= 78 }, "lines fit SMTP limits")
    }

    @Test func startTLSWithAuthenticationDelivers() async throws {
        let sink = try await SMTPSink(tls: true, user: "bridge", password: "s3cret")
        let channel = EmailChannel(settings: settings(sink.port, .starttls, user: "bridge", password: "s3cret"))
        _ = try await channel.send(delivery(test: true))
        let mail = try await sink.mail()
        #expect(mail.tls)
        #expect(mail.login == "bridge")
        #expect(mail.headers["X-FallGuard-Test"] == "yes")
    }

    @Test func wrongPasswordIsPermanent() async throws {
        let sink = try await SMTPSink(tls: true, user: "bridge", password: "s3cret")
        let channel = EmailChannel(settings: settings(sink.port, .starttls, user: "bridge", password: "guess"))
        await expectFailure(channel, delivery(), permanent: true)
        #expect(sink.count == 0)
    }

    @Test func implicitTLSDelivers() async throws {
        let sink = try await SMTPSink(implicitTLS: true)
        let channel = EmailChannel(settings: settings(sink.port, .tls))
        #expect(channel.settings.url.hasPrefix("smtps://"))
        _ = try await channel.send(delivery())
        #expect(try await sink.mail().tls)
    }

    @Test func serverWithoutStartTLSIsRefusedForGood() async throws {
        let sink = try await SMTPSink()
        let channel = EmailChannel(settings: settings(sink.port, .starttls))
        await expectFailure(channel, delivery(), permanent: true)
        #expect(sink.count == 0, "nothing sent in clear text")
    }

    @Test func rejectedRecipientIsPermanentAndABusyMailboxTransient() async throws {
        let sink = try await SMTPSink()
        let channel = EmailChannel(settings: settings(sink.port, .none))
        await expectFailure(channel, delivery(to: "reject@example.org"), permanent: true, mentioning: "550")
        await expectFailure(channel, delivery(to: "busy@example.org"), permanent: false, mentioning: "450")
        _ = try await channel.send(delivery())
        #expect(sink.count == 1)
    }

    @Test func unreachableOrSilentServerIsTransient() async throws {
        let nobody = loopbackPort().port
        await expectFailure(EmailChannel(settings: settings(nobody, .none)), delivery(), permanent: false)
        let silent = loopbackPort(listening: true)
        defer { close(silent.fd) }
        await expectFailure(EmailChannel(settings: settings(silent.port, .none, timeout: 1)), delivery(),
                            permanent: false, mentioning: "imed out")
    }

    @Test func recipientWithoutAValidAddressIsPermanent() async throws {
        let channel = EmailChannel(settings: settings(loopbackPort().port, .none))
        await expectFailure(channel, delivery(to: nil), permanent: true, mentioning: "no e-mail address")
        await expectFailure(channel, delivery(to: "anna@example.org\r\nBcc: x@y.org"), permanent: true)
    }
}
