import FallGuardConfigKeys
import FallGuardNotify

// The `type: email` channel's keys, declared here beside its settings: adding a channel touches
// its own module, the channel list (`ChannelTypes.all` in FallGuardConfig) and the example file.

/// `type: email`. `host` and `from` are required; `password` goes with `username`.
/// Recipients come from the contacts' `email`.
extension EmailChannelSettings: ChannelOptions, KeyedSection {
    public init() { self.init(host: "") }

    public static var keys: [ConfigKey<Self>] {
        [.value("host", \.host), .optional("port", \.port, in: 1...65_535), .word("security", \.security, SMTPSecurityWords.self),
         .optional("username", \.username), .optional("password", \.password, secret: true), .value("from", \.from),
         .value("from-name", \.fromName), .optional("ca-file", \.caFile),
         .value("connect-timeout", \.connectTimeout, in: 1...300, unit: " s"), .value("timeout", \.timeout, in: 1...600, unit: " s")]
    }

    public var addressing: ChannelAddressing { .email }

    public var secrets: [String] { secretValues }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        redacting(EmailChannel(name: name, settings: self, logger: context.logger))
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        func problem(_ key: PartialKeyPath<Self>, _ message: String, _ severity: ConfigProblem.Severity = .error) {
            found.append(ConfigProblem(Self.at(path, key), message, severity: severity))
        }
        if host.isEmpty || host.contains(where: { $0.isWhitespace || $0 == "/" }) {
            problem(\.host, host.isEmpty ? "the SMTP server's host name is required" : "'\(host)' is not a host name")
        }
        if username != nil, password == nil { problem(\.password, "a password is required with username") }
        if password != nil, username == nil { problem(\.username, "a username is required with password") }
        if from.isEmpty {
            problem(\.from, "the sender's address is required")
        } else if !EmailAddress.isValid(from) {
            problem(\.from, "'\(from)' is not an e-mail address")
        }
        found += ConfigCheck.printable(fromName, at: Self.at(path, \.fromName))
        if security == .none, !ConfigCheck.isLoopback(host) {
            problem(\.security, "'none' sends the alert and any password in clear text to \(host)", .warning)
        }
        if security == .none, username != nil { problem(\.security, "'none' with a username would send the password in clear text") }
        if let caFile, let why = ConfigCheck.unreadable(caFile) { problem(\.caFile, "cannot read '\(caFile)': \(why)") }
        return found
    }
}

enum SMTPSecurityWords: WordList {
    static let words: [(word: String, value: SMTPSecurity)] = [("starttls", .starttls), ("tls", .tls), ("none", .none)]
}
