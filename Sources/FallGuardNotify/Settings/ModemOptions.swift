/// SMS or voice calls through a cellular modem that ModemManager drives (``ModemChannel``): the
/// path that does not need the home's internet. Used as a channel of its own (in the policy's
/// routes) or as the `fallback` of an `sms`/`call` channel, when it is silent while that works.
public struct ModemOptions: ChannelOptions, Equatable {
    public enum Mode: Sendable, Equatable { case sms, call }

    public var mode: Mode
    /// `mmcli`, which modem, and the time limit of each run.
    public var manager: ModemManager
    /// Read the contacts' SMS replies (`sms` mode) while an alarm is open; an acknowledging one
    /// stops escalation, as a Twilio reply does.
    public var readReplies: Bool
    /// Seconds between two reads of the modem's received SMS and of a live call.
    public var pollInterval: Double
    /// The replies that acknowledge (see ``ReplyReader``).
    public var acknowledgeWords: [String]
    /// Seconds a call may ring before it is hung up as not answered (`call` mode).
    public var ringTimeout: Double
    /// Seconds an answered call stays up before the bridge hangs up (a modem has no voice to
    /// speak the message with on most HATs: the call rings the contact to their SMS).
    public var answeredFor: Double
    public var addressing: ChannelAddressing { .phone }

    public init(mode: Mode = .sms, manager: ModemManager = ModemManager(), readReplies: Bool = true, pollInterval: Double = 5,
                acknowledgeWords: [String] = ReplyReader.defaultWords, ringTimeout: Double = 45, answeredFor: Double = 20) {
        (self.mode, self.manager, self.readReplies, self.pollInterval) = (mode, manager, readReplies, pollInterval)
        (self.acknowledgeWords, self.ringTimeout, self.answeredFor) = (acknowledgeWords, ringTimeout, answeredFor)
    }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        ModemChannel(name: name, options: self)
    }
}

/// An `sms`/`call` channel that another channel stands in for when it fails: `fallback: modem`.
public protocol FallbackChannelOptions: ChannelOptions {
    /// The channel that takes this channel's deliveries when it has failed for ``fallbackAfter``.
    var fallback: String? { get set }
    /// Seconds this channel must have failed (every attempt since its first failure) before a
    /// delivery goes through ``fallback``; a permanent failure hands it over at once.
    var fallbackAfter: Double { get set }
}
