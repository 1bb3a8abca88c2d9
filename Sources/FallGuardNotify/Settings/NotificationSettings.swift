/// Everything the notifiers need: who is watched over, whom to tell, through which channels,
/// and the policy.
public struct NotificationSettings: Sendable, Equatable {
    /// This bridge's name in payloads and messages.
    public var device: String
    public var wearer: Wearer
    /// In order: the first is the primary contact, escalation goes down the list.
    public var contacts: [Recipient]
    /// Named channel instances.
    public var channels: [String: any ChannelOptions]
    public var policy: NotificationPolicy
    /// Per-kind message overrides.
    public var templates: MessageTemplates

    public init(device: String = "fallguard", wearer: Wearer, contacts: [Recipient],
                channels: [String: any ChannelOptions], policy: NotificationPolicy = NotificationPolicy(),
                templates: MessageTemplates = MessageTemplates()) {
        self.device = device
        self.wearer = wearer
        self.contacts = contacts
        self.channels = channels
        self.policy = policy
        self.templates = templates
    }

    /// Whether `channel`'s messages and payloads carry the wearer's location
    /// (``Wearer/locationChannels``, else the channels that send to a contact).
    public func carriesLocation(_ channel: String) -> Bool {
        if let listed = wearer.locationChannels { return listed.contains(channel) }
        return channels[channel].map { $0.addressing != .broadcast } ?? false
    }

    /// What `channel` sends of `payload`: the location withheld unless it carries it.
    public func payload(_ payload: AlertPayload, for channel: String) -> AlertPayload {
        carriesLocation(channel) ? payload : payload.withholdingLocation()
    }

    /// Every channel's ``ChannelOptions/secrets``.
    public var secrets: [String] { channels.keys.sorted().flatMap { channels[$0]!.secrets } }

    public static func == (a: NotificationSettings, b: NotificationSettings) -> Bool {
        a.device == b.device && a.wearer == b.wearer && a.contacts == b.contacts && a.channels.isSame(as: b.channels)
            && a.policy == b.policy && a.templates == b.templates
    }
}
