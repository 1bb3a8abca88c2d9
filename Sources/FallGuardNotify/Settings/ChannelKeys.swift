import FallGuardConfigKeys
import Foundation

// The keys of Notify's channel types (`type: twilio-sms`, `twilio-call`, `webhook`, `exec`,
// `console`), declared beside their options: adding a channel touches its own module, the
// channel list (`ChannelTypes.all` in FallGuardConfig) and the example file.

/// `type: twilio-sms`: the account's keys, `read-replies`, `reply-poll-interval`, `acknowledge-words`.
extension TwilioSMSOptions: KeyedSection {
    public init() { self.init(account: TwilioAccount()) }

    public static var keys: [ConfigKey<Self>] {
        TwilioAccount.keys(at: \.account) + [
            .value("read-replies", \.readReplies), .value("reply-poll-interval", \.replyPollInterval, in: 2...300, unit: " s"),
            .value("acknowledge-words", \.acknowledgeWords)] + fallbackKeys
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var found = account.problems(at: path, in: Self.self, \.account)
        if readReplies, ReplyReader(words: acknowledgeWords).words.isEmpty {
            found.append(ConfigProblem(Self.at(path, \.acknowledgeWords), "no word acknowledges: give at least one (default: \(ReplyReader.defaultWords.joined(separator: ", ")))"))
        }
        return found
    }
}

/// `type: twilio-call`: the account's keys, `repeat`, `language`, `follow-calls`,
/// `call-poll-interval` and `machine-detection`.
extension TwilioCallOptions: KeyedSection {
    public init() { self.init(account: TwilioAccount()) }

    public static var keys: [ConfigKey<Self>] {
        TwilioAccount.keys(at: \.account) + [
            .value("repeat", \.repeat, in: 1...10), .value("language", \.language), .value("follow-calls", \.followCalls),
            .value("call-poll-interval", \.callPollInterval, in: 1...60, unit: " s"), .value("machine-detection", \.machineDetection)]
            + fallbackKeys
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        account.problems(at: path, in: Self.self, \.account) + ConfigCheck.required(language, at: Self.at(path, \.language))
    }
}

extension FallbackChannelOptions where Self: KeyedSection {
    /// `fallback` (a channel's name) and `fallback-after`.
    static var fallbackKeys: [ConfigKey<Self>] {
        [.optional("fallback", \.fallback), .value("fallback-after", \.fallbackAfter, in: 1...3600, unit: " s")]
    }

    /// Where `fallback` is in the channel at `path`.
    public func fallbackPath(_ path: [String]) -> [String] { Self.at(path, \.fallback) }
}

/// `type: modem`: `mode` (sms or call), `modem`, `mmcli`, `timeout`, `read-replies`,
/// `poll-interval`, `acknowledge-words`, `ring-timeout`, `answered-for`.
extension ModemOptions: KeyedSection {
    public init() { self.init(mode: .sms) }

    public static var keys: [ConfigKey<Self>] {
        [.word("mode", \.mode, ModemModeWords.self), .value("modem", \.manager.modem), .value("mmcli", \.manager.mmcli),
         .value("timeout", \.manager.timeout, in: 1...300, unit: " s"), .value("read-replies", \.readReplies),
         .value("poll-interval", \.pollInterval, in: 1...300, unit: " s"), .value("acknowledge-words", \.acknowledgeWords),
         .value("ring-timeout", \.ringTimeout, in: 5...300, unit: " s"), .value("answered-for", \.answeredFor, in: 1...600, unit: " s")]
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        if ExecChannel.resolve(manager.mmcli) == nil {
            found.append(ConfigProblem(Self.at(path, \.manager.mmcli), "'\(manager.mmcli)' is not installed (Debian: apt install modemmanager)",
                                       severity: .warning))
        }
        if ExecChannel.resolve(manager.busctl) == nil {
            found.append(ConfigProblem(Self.at(path, \.manager.mmcli), "'\(manager.busctl)' is not installed: the modem sends through it (Debian: apt install systemd)",
                                       severity: .warning))
        }
        if readReplies, mode == .sms, ReplyReader(words: acknowledgeWords).words.isEmpty {
            found.append(ConfigProblem(Self.at(path, \.acknowledgeWords), "no word acknowledges: give at least one (default: \(ReplyReader.defaultWords.joined(separator: ", ")))"))
        }
        return found
    }
}

enum ModemModeWords: WordList {
    static let words: [(word: String, value: ModemOptions.Mode)] = [("sms", .sms), ("call", .call)]
}

extension TwilioAccount {
    init() { self.init(accountSID: "", authToken: "", from: "") }

    /// The account's keys, beside the other keys of the channel that holds it at `account`.
    static func keys<Options>(at account: WritableKeyPath<Options, TwilioAccount>) -> [ConfigKey<Options>] {
        [.value("account-sid", account.appending(path: \.accountSID)), .value("auth-token", account.appending(path: \.authToken), secret: true),
         .value("from", account.appending(path: \.from)), .value("base-url", account.appending(path: \.baseURL)),
         .value("timeout", account.appending(path: \.timeout), in: 1...120, unit: " s"),
         .value("allow-plaintext", account.appending(path: \.allowPlaintext))]
    }

    /// The account's problems, at the keys the channel `Options` at `path` declares for it.
    func problems<Options: KeyedSection>(at path: [String], in _: Options.Type,
                                         _ account: WritableKeyPath<Options, TwilioAccount>) -> [ConfigProblem] {
        func at(_ key: WritableKeyPath<TwilioAccount, some Any>) -> [String] { Options.at(path, account.appending(path: key)) }
        var found = ConfigCheck.credential(accountSID, at: at(\.accountSID))
            + ConfigCheck.credential(authToken, at: at(\.authToken))
            + ConfigCheck.phone(from, at: at(\.from))
            + ConfigCheck.httpURL(baseURL, at: at(\.baseURL))
        if let url = URL(string: baseURL), url.scheme?.lowercased() == "http", let host = url.host {
            found += ConfigCheck.plaintext("the auth token", to: host, allowed: allowPlaintext, at: at(\.baseURL))
        }
        return found
    }
}

/// `type: webhook`: `url`, `secret`, `headers`, `body` (json or text), `timeout`.
extension WebhookOptions: KeyedSection {
    public init() { self.init(url: "") }

    public static var keys: [ConfigKey<Self>] {
        [.value("url", \.url), .value("secret", \.secret, secret: true), .value("headers", \.headers),
         .word("body", \.body, WebhookBodyWords.self), .value("timeout", \.timeout, in: 1...120, unit: " s")]
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var found = ConfigCheck.httpURL(url, at: Self.at(path, \.url))
        for name in headers.keys.sorted() {
            if !Self.isToken(name) { found.append(ConfigProblem(Self.at(path, \.headers) + [name], "'\(name)' is not a valid HTTP header name")) }
            found += ConfigCheck.printable(headers[name]!.replacingOccurrences(of: "\t", with: " "), at: Self.at(path, \.headers) + [name])
        }
        return found
    }

    private static func isToken(_ s: String) -> Bool {
        !s.isEmpty && s.unicodeScalars.allSatisfy { c in
            c.isASCII && c.value > 32 && c.value < 127 && !"()<>@,;:\\\"/[]?={}".unicodeScalars.contains(c)
        }
    }
}

enum WebhookBodyWords: WordList {
    static let words: [(word: String, value: WebhookOptions.Body)] = [("json", .json), ("text", .text)]
}

/// `type: exec`: `command` (an argv list) and `timeout`.
extension ExecOptions: KeyedSection {
    public init() { self.init(command: []) }

    public static var keys: [ConfigKey<Self>] {
        [.value("command", \.command), .value("timeout", \.timeout, in: 0.1...3600, unit: " s")]
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        guard let program = command.first, !program.isEmpty else {
            return [ConfigProblem(Self.at(path, \.command), "must name a program to run")]
        }
        if ExecChannel.resolve(program) == nil {
            return [ConfigProblem(Self.at(path, \.command) + ["0"],
                                  "'\(program)' is not an executable file (nor found on the command's PATH, \(ExecChannel.searchPath))")]
        }
        return []
    }
}

/// `type: ntfy`: `server`, `topic`, `token`, `timeout`.
extension NtfyOptions: KeyedSection {
    public init() { self.init(topic: "") }

    public static var keys: [ConfigKey<Self>] {
        [.value("server", \.server), .value("topic", \.topic, required: true), .value("token", \.token, secret: true),
         .value("timeout", \.timeout, in: 1...120, unit: " s")]
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var found = ConfigCheck.httpURL(server, at: Self.at(path, \.server))
        // ntfy's topic names: whoever guesses one reads the alarms, so no short or shared word.
        if topic.count < 8 || topic.count > 64 || !topic.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "-" || $0 == "_") }) {
            found.append(ConfigProblem(Self.at(path, \.topic), "'\(topic)' is not a topic of 8 to 64 letters, digits, - and _ (anyone who guesses it reads the alarms: make it long)"))
        }
        if !token.isEmpty, let url = URL(string: server), url.scheme?.lowercased() == "http", let host = url.host {
            found += ConfigCheck.plaintext("the token", to: host, allowed: false, at: Self.at(path, \.server))
        }
        return found
    }
}

/// `type: console`: no keys.
extension ConsoleOptions: KeyedSection {
    public static var keys: [ConfigKey<Self>] { [] }
}
