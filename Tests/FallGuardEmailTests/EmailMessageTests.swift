@testable import FallGuardEmail
import FallGuardCore
import Foundation
import Testing
import FallGuardTestSupport

@Suite struct EmailMessageTests {
    // Reading the keys and checking the values: FallGuardConfigTests' ChannelSectionTests.

    @Test func portsAndURLs() {
        let s = EmailChannelSettings(host: "mail.example.org", from: "fallguard@example.org")
        #expect(s.security == .starttls && s.effectivePort == 587 && s.url == "smtp://mail.example.org:587")
        let tls = EmailChannelSettings(host: "mail.example.org", security: .tls, from: "a@example.org")
        #expect(tls.effectivePort == 465 && tls.url == "smtps://mail.example.org:465")
        #expect(EmailChannelSettings(host: "::1", security: .none).url == "smtp://[::1]:25")
    }

    @Test func addressesThatWouldBreakTheEnvelopeAreRefused() {
        #expect(EmailAddress.isValid("anna.smith+care@example.org"))
        for bad in ["anna", "@example.org", "anna@", "anna@localhost", "a b@example.org", "a@b.org\r\nBcc: c@d.org", "<a@b.org>", "a@b@c.org"] {
            #expect(!EmailAddress.isValid(bad), "\(bad)")
        }
    }

    @Test func headersAreOneLineAndNonASCIIIsEncoded() {
        #expect(EmailMessage.encodedWords("Fall: Margaret") == "Fall: Margaret")
        #expect(EmailMessage.encodedWords("two\r\nlines") == "two  lines")
        let encoded = EmailMessage.encodedWords(String(repeating: "é", count: 40))
        let words = encoded.components(separatedBy: "\r\n ")
        #expect(words.count == 2 && words.allSatisfy { $0.hasPrefix("=?utf-8?B?") && $0.hasSuffix("?=") && $0.count <= 75 })
        let decoded = words.map { w in
            String(decoding: Data(base64Encoded: String(w.dropFirst(10).dropLast(2)))!, as: UTF8.self)
        }.joined()
        #expect(decoded == String(repeating: "é", count: 40))
        #expect(EmailMessage.mailbox("Anna \"Nan\" Smith", "a@b.org") == #""Anna \"Nan\" Smith" <a@b.org>"#)
        #expect(EmailMessage.mailbox("Zoë", "z@b.org") == "=?utf-8?B?Wm/Dqw==?= <z@b.org>")
    }

    @Test func quotedPrintableKeepsLinesShortAndTextRecoverable() {
        let text = "café = ok\ntrailing space \n" + String(repeating: "x", count: 200)
        let qp = EmailMessage.quotedPrintable(text)
        #expect(qp.hasPrefix("caf=C3=A9 =3D ok\r\ntrailing space=20\r\n"))
        #expect(qp.components(separatedBy: "\r\n").allSatisfy { $0.count <= 76 })
        // Undo it: soft breaks, then =XX.
        let joined = Array(qp.replacingOccurrences(of: "=\r\n", with: "").replacingOccurrences(of: "\r\n", with: "\n").utf8)
        var bytes: [UInt8] = [], i = 0
        while i < joined.count {
            if joined[i] == UInt8(ascii: "=") {
                bytes.append(UInt8(String(decoding: joined[i + 1...i + 2], as: UTF8.self), radix: 16)!)
                i += 3
            } else {
                bytes.append(joined[i])
                i += 1
            }
        }
        #expect(String(decoding: bytes, as: UTF8.self) == text + "\n")
    }

    @Test func retriesOfOneDeliveryShareTheMessageID() {
        let a = EmailMessage(from: "f@example.org", fromName: "FallGuard", to: "t@example.org", toName: nil,
                             subject: "s", body: "b", idempotencyKey: "FG-7/sms 1", date: Date(timeIntervalSince1970: 0))
        var b = a
        b.date = Date(timeIntervalSince1970: 60)
        #expect(a.messageID == "<fallguard.FG-7_sms_1@example.org>" && a.messageID == b.messageID)
        #expect(String(decoding: a.bytes, as: UTF8.self).contains("\r\nX-FallGuard-Idempotency-Key: FG-7/sms 1\r\n"))
    }
}
