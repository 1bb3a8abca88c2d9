import FallGuardCore

/// The account of a Twilio-compatible REST API, shared by the SMS and the call channel.
public struct TwilioAccount: Sendable, Equatable, Codable {
    /// Key `account-sid`.
    public var accountSID: String
    /// Key `auth-token` (the loader resolves `env:`/credential files into it).
    public var authToken: String
    /// Key `from`: the sending number, E.164.
    public var from: String
    /// Key `base-url`, default `https://api.twilio.com`: another provider or a test server.
    public var baseURL: String
    /// Key `timeout`: seconds for one request, default 15.
    public var timeout: Double

    public init(accountSID: String, authToken: String, from: String,
                baseURL: String = "https://api.twilio.com", timeout: Double = 15) {
        self.accountSID = accountSID
        self.authToken = authToken
        self.from = from
        self.baseURL = baseURL
        self.timeout = timeout
    }

    enum CodingKeys: String, CodingKey {
        case accountSID = "account-sid", authToken = "auth-token", from, baseURL = "base-url", timeout
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        accountSID = try c.value(.accountSID, or: "")
        authToken = try c.value(.authToken, or: "")
        from = try c.value(.from, or: "")
        baseURL = try c.value(.baseURL, or: "https://api.twilio.com")
        timeout = try c.value(.timeout, or: 15)
    }

    func problems(at path: [String]) -> [ConfigProblem] {
        ConfigCheck.credential(accountSID, at: path + ["account-sid"])
            + ConfigCheck.credential(authToken, at: path + ["auth-token"])
            + ConfigCheck.phone(from, at: path + ["from"])
            + ConfigCheck.httpURL(baseURL, at: path + ["base-url"])
            + ConfigCheck.seconds(timeout, in: 1...120, at: path + ["timeout"])
    }
}

/// `type: twilio-sms`: a text message through the Messages resource.
public struct TwilioSMSOptions: ChannelOptions, Equatable {
    public static let type = "twilio-sms"
    public var account: TwilioAccount
    public var addressing: ChannelAddressing { .phone }

    public init(account: TwilioAccount) { self.account = account }
    public init(from decoder: any Decoder) throws { account = try TwilioAccount(from: decoder) }
    public func encode(to encoder: any Encoder) throws { try account.encode(to: encoder) }
    public func problems(at path: [String]) -> [ConfigProblem] { account.problems(at: path) }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        TwilioChannel(name: name, account: account, mode: .sms, client: context.httpClient)
    }
}

/// `type: twilio-call`: a voice call through the Calls resource that speaks the message.
public struct TwilioCallOptions: ChannelOptions, Equatable {
    public static let type = "twilio-call"
    public var account: TwilioAccount
    /// Key `repeat`: how many times the call speaks the message, default 3.
    public var repeatCount: Int
    /// Key `language`: the `<Say>` language, default `en-GB`.
    public var language: String
    public var addressing: ChannelAddressing { .phone }

    public init(account: TwilioAccount, repeatCount: Int = 3, language: String = "en-GB") {
        self.account = account
        self.repeatCount = repeatCount
        self.language = language
    }

    private enum CodingKeys: String, CodingKey { case repeatCount = "repeat", language }

    public init(from decoder: any Decoder) throws {
        account = try TwilioAccount(from: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        repeatCount = try c.value(.repeatCount, or: 3)
        language = try c.value(.language, or: "en-GB")
    }

    public func encode(to encoder: any Encoder) throws {
        try account.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(repeatCount, forKey: .repeatCount)
        try c.encode(language, forKey: .language)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found = account.problems(at: path)
        if !(1...10).contains(repeatCount) { found.append(ConfigProblem(path + ["repeat"], "\(repeatCount) is outside 1...10")) }
        found += ConfigCheck.required(language, at: path + ["language"])
        return found
    }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        TwilioChannel(name: name, account: account, mode: .call(repeatCount: repeatCount, language: language),
                      client: context.httpClient)
    }
}
