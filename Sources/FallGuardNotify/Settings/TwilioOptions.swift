import AsyncHTTPClient
import Foundation
import NIOHTTP1

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

    /// `{base}/2010-04-01/Accounts/{sid}/{resource}`, e.g. `Messages.json`, `Calls/CA….json`.
    public func url(_ resource: String) -> String {
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        return "\(base)/2010-04-01/Accounts/\(accountSID)/\(resource)"
    }

    /// A request to `url` with the account's basic auth.
    func request(_ url: String, method: HTTPMethod) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.method = method
        let credentials = Data("\(accountSID):\(authToken)".utf8).base64EncodedString()
        request.headers.add(name: "Authorization", value: "Basic \(credentials)")
        return request
    }
}

/// A text message through the Messages resource; replies to the sending number are read while
/// an alarm is open (``CaregiverFollowUp``).
public struct TwilioSMSOptions: FallbackChannelOptions, Equatable {
    public var account: TwilioAccount
    /// The channel (a `modem`) that stands in while this one fails.
    public var fallback: String?
    public var fallbackAfter: Double = 30
    /// Read the contacts' replies while an alarm is open; an acknowledging one stops escalation.
    public var readReplies: Bool
    /// Seconds between two reads of the Messages list.
    public var replyPollInterval: Double
    /// The replies that acknowledge (see ``ReplyReader``).
    public var acknowledgeWords: [String]
    public var addressing: ChannelAddressing { .phone }

    public init(account: TwilioAccount, readReplies: Bool = true, replyPollInterval: Double = 10,
                acknowledgeWords: [String] = ReplyReader.defaultWords) {
        (self.account, self.readReplies, self.replyPollInterval, self.acknowledgeWords) =
            (account, readReplies, replyPollInterval, acknowledgeWords)
    }

    public var secrets: [String] { account.secrets }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        redacting(TwilioChannel(name: name, account: account, mode: .sms, client: context.httpClient))
    }
}

/// A voice call through the Calls resource that speaks the message.
public struct TwilioCallOptions: FallbackChannelOptions, Equatable {
    public var account: TwilioAccount
    /// The channel (a `modem` in `call` mode) that stands in while this one fails.
    public var fallback: String?
    public var fallbackAfter: Double = 30
    /// How many times the call speaks the message.
    public var `repeat`: Int
    /// The `<Say>` language.
    public var language: String
    /// Follow each call to its end (the Call resource) and escalate at once when it reached
    /// nobody: no answer, busy, failed, or a machine.
    public var followCalls: Bool
    /// Seconds between two reads of a live call.
    public var callPollInterval: Double
    /// Ask the provider to tell a person from a voicemail (`MachineDetection=Enable`).
    public var machineDetection: Bool
    public var addressing: ChannelAddressing { .phone }

    public init(account: TwilioAccount, repeat: Int = 3, language: String = "en-GB", followCalls: Bool = true,
                callPollInterval: Double = 5, machineDetection: Bool = true) {
        (self.account, self.repeat, self.language) = (account, `repeat`, language)
        (self.followCalls, self.callPollInterval, self.machineDetection) = (followCalls, callPollInterval, machineDetection)
    }

    public var secrets: [String] { account.secrets }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        redacting(TwilioChannel(name: name, account: account,
                                mode: .call(repeatCount: self.repeat, language: language, machineDetection: machineDetection),
                                client: context.httpClient))
    }
}
