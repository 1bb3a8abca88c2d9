/// The account of a Twilio-compatible REST API, shared by the SMS and the call channel.
public struct TwilioAccount: Sendable, Equatable {
    public var accountSID: String
    public var authToken: String
    /// The sending number, E.164.
    public var from: String
    /// The API's base URL: Twilio's, another provider's or a test server's.
    public var baseURL: String
    /// Seconds for one request.
    public var timeout: Double
    /// The administrator accepts that an `http://` ``baseURL`` to another machine carries the
    /// auth token in clear (a test server on the LAN). Only the configuration check reads it.
    public var allowPlaintext = false

    public init(accountSID: String, authToken: String, from: String,
                baseURL: String = "https://api.twilio.com", timeout: Double = 15) {
        (self.accountSID, self.authToken, self.from, self.baseURL, self.timeout) = (accountSID, authToken, from, baseURL, timeout)
    }

    /// The auth token, and a password in the base URL.
    public var secrets: [String] { [authToken] + SecretRedactor.secrets(inURL: baseURL, path: false) }
}

/// A text message through the Messages resource.
public struct TwilioSMSOptions: ChannelOptions, Equatable {
    public var account: TwilioAccount
    public var addressing: ChannelAddressing { .phone }

    public init(account: TwilioAccount) { self.account = account }

    public var secrets: [String] { account.secrets }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        redacting(TwilioChannel(name: name, account: account, mode: .sms, client: context.httpClient))
    }
}

/// A voice call through the Calls resource that speaks the message.
public struct TwilioCallOptions: ChannelOptions, Equatable {
    public var account: TwilioAccount
    /// How many times the call speaks the message.
    public var repeatCount: Int
    /// The `<Say>` language.
    public var language: String
    public var addressing: ChannelAddressing { .phone }

    public init(account: TwilioAccount, repeatCount: Int = 3, language: String = "en-GB") {
        (self.account, self.repeatCount, self.language) = (account, repeatCount, language)
    }

    public var secrets: [String] { account.secrets }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        redacting(TwilioChannel(name: name, account: account, mode: .call(repeatCount: repeatCount, language: language),
                                client: context.httpClient))
    }
}
