import FallGuardCore
import FallGuardEmail
import FallGuardMQTT
import FallGuardNotify
import Foundation

// Every channel type a `channels` entry may name (`type: twilio-sms`, `type: mqtt`, …), with
// its keys, defaults and checks. The types are listed here; there is no registry.

/// The options of a channel type, read from the keys beside `type:`.
public protocol ChannelSection: ChannelOptions, ConfigSection {}

public enum ChannelTypes {
    /// Every channel type of this build by its `type:` word, in the order `check-config` lists them.
    public static let all: [(type: String, options: any ChannelSection.Type)] = [
        ("twilio-sms", TwilioSMSOptions.self), ("twilio-call", TwilioCallOptions.self), ("webhook", WebhookOptions.self),
        ("exec", ExecOptions.self), ("console", ConsoleOptions.self), ("mqtt", MQTTChannelSettings.self),
        ("email", EmailChannelSettings.self),
    ]

    /// The `type:` word of `options`.
    public static func type(of options: any ChannelOptions) -> String? {
        all.first { ObjectIdentifier($0.options) == ObjectIdentifier(Swift.type(of: options)) }?.type
    }
}

/// The `type:` words.
extension ChannelTypes: WordList {
    static var words: [(word: String, value: any ChannelSection.Type)] { all.map { ($0.type, $0.options) } }
}

/// One entry of `channels`: `{type: twilio-sms, account-sid: …, …}`.
struct ChannelEntry: ConfigSection {
    var options: any ChannelOptions

    init(_ options: any ChannelOptions) { self.options = options }

    private enum CodingKeys: String, CodingKey { case type }

    init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let type = try c.decode(String.self, forKey: .type)
        if let known = ChannelTypes.value(named: type) {
            options = try known.init(fromConfig: decoder)
        } else {
            options = UnknownChannel(type: type)
        }
    }

    func encodeConfig(to encoder: any Encoder) throws {
        if let options = options as? any ConfigSection { try options.encodeConfig(to: encoder) }
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(ChannelTypes.type(of: options) ?? (options as? UnknownChannel)?.type ?? "", forKey: .type)
    }

    func problems(at path: [String]) -> [ConfigProblem] {
        (options as? any ConfigSection)?.problems(at: path) ?? []
    }
}

/// An entry whose `type:` names no channel type: kept so that it is reported once (and not
/// again as an unknown channel wherever the policy names it). The configuration does not load.
struct UnknownChannel: ChannelOptions, ConfigSection, Equatable {
    var type: String
    var addressing: ChannelAddressing { .broadcast }

    init(type: String) { self.type = type }
    init(fromConfig decoder: any Decoder) throws { type = "" }
    func encodeConfig(to encoder: any Encoder) throws {}

    func problems(at path: [String]) -> [ConfigProblem] {
        [ConfigProblem(path + ["type"], ChannelTypes.mismatch(type))]
    }

    func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        throw ConfigProblem(["channels", name, "type"], "unknown channel type '\(type)'")
    }
}

// MARK: the channel types

/// `type: twilio-sms`: `account-sid`, `auth-token`, `from`, `base-url`, `timeout`,
/// `allow-plaintext`, `read-replies`, `reply-poll-interval`, `acknowledge-words`.
extension TwilioSMSOptions: ChannelSection {
    enum CodingKeys: String, CodingKey {
        case readReplies = "read-replies", replyPollInterval = "reply-poll-interval", acknowledgeWords = "acknowledge-words"
    }

    public init(fromConfig decoder: any Decoder) throws {
        let account = try TwilioAccount(fromConfig: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = TwilioSMSOptions(account: account)
        self.init(account: account, readReplies: try c.value(.readReplies, default: d.readReplies),
                  replyPollInterval: try c.value(.replyPollInterval, default: d.replyPollInterval),
                  acknowledgeWords: try c.value(.acknowledgeWords, default: d.acknowledgeWords))
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        try account.encodeConfig(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(readReplies, forKey: .readReplies)
        try c.encode(replyPollInterval, forKey: .replyPollInterval)
        try c.encode(acknowledgeWords, forKey: .acknowledgeWords)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found = account.problems(at: path)
        if !(2...300).contains(replyPollInterval) {
            found.append(ConfigProblem(path + ["reply-poll-interval"], "\(fixedDecimal(replyPollInterval, digits: 1)) s is outside 2...300"))
        }
        if readReplies, ReplyReader(words: acknowledgeWords).words.isEmpty {
            found.append(ConfigProblem(path + ["acknowledge-words"], "no word acknowledges: give at least one (default: \(ReplyReader.defaultWords.joined(separator: ", ")))"))
        }
        return found
    }
}

/// `type: twilio-call`: the account's keys, `repeat`, `language`, `follow-calls`,
/// `call-poll-interval` and `machine-detection`.
extension TwilioCallOptions: ChannelSection {
    enum CodingKeys: String, CodingKey {
        case repeatCount = "repeat", language, followCalls = "follow-calls", callPollInterval = "call-poll-interval"
        case machineDetection = "machine-detection"
    }

    public init(fromConfig decoder: any Decoder) throws {
        let account = try TwilioAccount(fromConfig: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = TwilioCallOptions(account: account)
        self.init(account: account, repeatCount: try c.value(.repeatCount, default: d.repeatCount),
                  language: try c.value(.language, default: d.language),
                  followCalls: try c.value(.followCalls, default: d.followCalls),
                  callPollInterval: try c.value(.callPollInterval, default: d.callPollInterval),
                  machineDetection: try c.value(.machineDetection, default: d.machineDetection))
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        try account.encodeConfig(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(repeatCount, forKey: .repeatCount)
        try c.encode(language, forKey: .language)
        try c.encode(followCalls, forKey: .followCalls)
        try c.encode(callPollInterval, forKey: .callPollInterval)
        try c.encode(machineDetection, forKey: .machineDetection)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found = account.problems(at: path)
        if !(1...10).contains(repeatCount) { found.append(ConfigProblem(path + ["repeat"], "\(repeatCount) is outside 1...10")) }
        found += ConfigCheck.required(language, at: path + ["language"])
        if !(1...60).contains(callPollInterval) {
            found.append(ConfigProblem(path + ["call-poll-interval"], "\(fixedDecimal(callPollInterval, digits: 1)) s is outside 1...60"))
        }
        return found
    }
}

extension TwilioAccount {
    enum CodingKeys: String, CodingKey {
        case accountSID = "account-sid", authToken = "auth-token", from, baseURL = "base-url", timeout
        case allowPlaintext = "allow-plaintext"
    }

    init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = TwilioAccount(accountSID: "", authToken: "", from: "")
        self.init(accountSID: try c.value(.accountSID, default: d.accountSID),
                  authToken: try c.value(.authToken, default: d.authToken),
                  from: try c.value(.from, default: d.from),
                  baseURL: try c.value(.baseURL, default: d.baseURL),
                  timeout: try c.value(.timeout, default: d.timeout))
        allowPlaintext = try c.value(.allowPlaintext, default: d.allowPlaintext)
    }

    func encodeConfig(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(accountSID, forKey: .accountSID)
        try c.encode(authToken, forKey: .authToken)
        try c.encode(from, forKey: .from)
        try c.encode(baseURL, forKey: .baseURL)
        try c.encode(timeout, forKey: .timeout)
        try c.encode(allowPlaintext, forKey: .allowPlaintext)
    }

    func problems(at path: [String]) -> [ConfigProblem] {
        var found = ConfigCheck.credential(accountSID, at: path + ["account-sid"])
            + ConfigCheck.credential(authToken, at: path + ["auth-token"])
            + ConfigCheck.phone(from, at: path + ["from"])
            + ConfigCheck.httpURL(baseURL, at: path + ["base-url"])
            + ConfigCheck.seconds(timeout, in: 1...120, at: path + ["timeout"])
        if let url = URL(string: baseURL), url.scheme?.lowercased() == "http", let host = url.host {
            found += ConfigCheck.plaintext("the auth token", to: host, allowed: allowPlaintext, at: path + ["base-url"])
        }
        return found
    }
}

/// `type: webhook`: `url`, `secret`, `headers`, `body` (json or text), `timeout`.
extension WebhookOptions: ChannelSection {
    enum CodingKeys: String, CodingKey { case url, secret, headers, body, timeout }

    public init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = WebhookOptions(url: "")
        self.init(url: try c.value(.url, default: d.url), secret: try c.value(.secret, default: d.secret),
                  headers: try c.value(.headers, default: d.headers),
                  body: try c.word(WebhookBodyWords.self, .body, default: d.body),
                  timeout: try c.value(.timeout, default: d.timeout))
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(url, forKey: .url)
        try c.encode(secret, forKey: .secret)
        try c.encode(headers, forKey: .headers)
        try c.encode(body, as: WebhookBodyWords.self, forKey: .body)
        try c.encode(timeout, forKey: .timeout)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found = ConfigCheck.httpURL(url, at: path + ["url"]) + ConfigCheck.seconds(timeout, in: 1...120, at: path + ["timeout"])
        for name in headers.keys.sorted() {
            if !Self.isToken(name) { found.append(ConfigProblem(path + ["headers", name], "'\(name)' is not a valid HTTP header name")) }
            found += ConfigCheck.printable(headers[name]!.replacingOccurrences(of: "\t", with: " "), at: path + ["headers", name])
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
extension ExecOptions: ChannelSection {
    enum CodingKeys: String, CodingKey { case command, timeout }

    public init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = ExecOptions(command: [])
        self.init(command: try c.value(.command, default: d.command), timeout: try c.value(.timeout, default: d.timeout))
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(command, forKey: .command)
        try c.encode(timeout, forKey: .timeout)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found = ConfigCheck.seconds(timeout, in: 0.1...3600, at: path + ["timeout"])
        guard let program = command.first, !program.isEmpty else {
            return found + [ConfigProblem(path + ["command"], "must name a program to run")]
        }
        if ExecChannel.resolve(program) == nil {
            found.append(ConfigProblem(path + ["command", "0"],
                                       "'\(program)' is not an executable file (nor found on the command's PATH, \(ExecChannel.searchPath))"))
        }
        return found
    }
}

/// `type: console`: no keys.
extension ConsoleOptions: ChannelSection {
    public init(fromConfig decoder: any Decoder) throws { self.init() }
    public func encodeConfig(to encoder: any Encoder) throws {}
    public func problems(at path: [String]) -> [ConfigProblem] { [] }
}
