import Foundation

/// One plain-text e-mail as it goes over SMTP: RFC 5322 headers (non-ASCII words encoded as
/// RFC 2047), a quoted-printable UTF-8 body, CRLF line ends.
public struct EmailMessage: Sendable, Equatable {
    public var from: String
    public var fromName: String
    public var to: String
    public var toName: String?
    public var subject: String
    public var body: String
    /// Goes into `X-FallGuard-Idempotency-Key` and the `Message-ID`, so retries of one delivery
    /// carry the same id and mail clients can drop the duplicates.
    public var idempotencyKey: String
    /// Extra `X-FallGuard-…` headers (`Incident`, `Severity`, `Test`).
    public var extraHeaders: [(name: String, value: String)]
    public var date: Date

    public init(from: String, fromName: String, to: String, toName: String?, subject: String, body: String,
                idempotencyKey: String, extraHeaders: [(name: String, value: String)] = [], date: Date = Date()) {
        self.from = from
        self.fromName = fromName
        self.to = to
        self.toName = toName
        self.subject = subject
        self.body = body
        self.idempotencyKey = idempotencyKey
        self.extraHeaders = extraHeaders
        self.date = date
    }

    public static func == (a: EmailMessage, b: EmailMessage) -> Bool {
        a.bytes == b.bytes
    }

    /// `<fallguard.KEY@domain-of-from>`, with the key reduced to characters a Message-ID allows.
    public var messageID: String {
        let key = String(idempotencyKey.unicodeScalars.map { c in
            c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || ".-_".unicodeScalars.contains(c)) ? Character(c) : "_"
        })
        let domain = from.split(separator: "@").last.map(String.init) ?? "fallguard.invalid"
        return "<fallguard.\(key)@\(domain)>"
    }

    /// The whole message.
    public var bytes: [UInt8] {
        var headers: [(String, String)] = [
            ("Date", Self.rfc5322Date(date)),
            ("From", Self.mailbox(fromName, from)),
            ("To", toName.map { Self.mailbox($0, to) } ?? to),
            ("Subject", Self.encodedWords(subject)),
            ("Message-ID", messageID),
            ("MIME-Version", "1.0"),
            ("Content-Type", "text/plain; charset=utf-8"),
            ("Content-Transfer-Encoding", "quoted-printable"),
            ("Auto-Submitted", "auto-generated"),
            ("X-FallGuard-Idempotency-Key", Self.oneLine(idempotencyKey)),
        ]
        headers += extraHeaders.map { ("X-FallGuard-\($0.name)", Self.encodedWords($0.value)) }
        var text = headers.map { "\($0.0): \($0.1)\r\n" }.joined()
        text += "\r\n"
        text += Self.quotedPrintable(body)
        return Array(text.utf8)
    }

    /// `Sun, 22 Nov 2026 10:00:00 +0000`.
    static func rfc5322Date(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone.current
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        return f.string(from: date)
    }

    /// `"Name" <address>` (quotes and backslashes escaped), or RFC 2047 words for a non-ASCII name.
    static func mailbox(_ name: String, _ address: String) -> String {
        let n = oneLine(name)
        guard !n.isEmpty else { return address }
        guard n.unicodeScalars.allSatisfy({ $0.isASCII }) else { return "\(encodedWords(n)) <\(address)>" }
        let escaped = n.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "\"\(escaped)\" <\(address)>"
    }

    /// The text as is when it is printable ASCII, else as RFC 2047 base64 words of at most
    /// 45 bytes each (never splitting a character), folded onto continuation lines.
    static func encodedWords(_ text: String) -> String {
        let line = oneLine(text)
        if line.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }), line.utf8.count <= 900 {
            return line
        }
        var words: [[UInt8]] = []
        var chunk: [UInt8] = []
        for character in line {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 45, !chunk.isEmpty {
                words.append(chunk)
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append(chunk) }
        return words.map { "=?utf-8?B?\(Data($0).base64EncodedString())?=" }.joined(separator: "\r\n ")
    }

    /// Line breaks and other control characters turned into spaces: headers are one line.
    static func oneLine(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
    }

    /// RFC 2045 quoted-printable with CRLF line ends and soft breaks before 76 characters.
    static func quotedPrintable(_ text: String) -> String {
        let lines = text.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
        return lines.map { line -> String in
            let bytes = Array(line.utf8)
            var out = "", width = 0
            for (i, b) in bytes.enumerated() {
                let last = i == bytes.count - 1
                let literal = (b >= 33 && b <= 126 && b != 61) || ((b == 32 || b == 9) && !last)
                let piece = literal ? String(UnicodeScalar(b)) : String(format: "=%02X", b)
                if width + piece.count > 75 {
                    out += "=\r\n"
                    width = 0
                }
                out += piece
                width += piece.count
            }
            return out
        }.joined(separator: "\r\n") + "\r\n"
    }
}
