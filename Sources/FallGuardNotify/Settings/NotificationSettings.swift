import FallGuardCore

/// Everything the notifiers need from the configuration: who is watched over, whom to tell,
/// through which channels, and the policy. The sections sit at the top of the file.
public struct NotificationSettings: ConfigSection {
    /// Key `device`: this bridge's name in payloads and messages, default `fallguard`.
    public var device: String
    /// Key `wearer`.
    public var wearer: Wearer
    /// Key `contacts`: in order, the first is the primary contact.
    public var contacts: [Recipient]
    /// Key `channels`: named channel instances.
    public var channels: [String: ChannelSettings]
    /// Key `policy`.
    public var policy: NotificationPolicy
    /// Key `templates`: per-kind message overrides.
    public var templates: MessageTemplates

    public init(device: String = "fallguard", wearer: Wearer, contacts: [Recipient],
                channels: [String: ChannelSettings], policy: NotificationPolicy = NotificationPolicy(),
                templates: MessageTemplates = MessageTemplates()) {
        self.device = device
        self.wearer = wearer
        self.contacts = contacts
        self.channels = channels
        self.policy = policy
        self.templates = templates
    }

    private enum CodingKeys: String, CodingKey { case device, wearer, contacts, channels, policy, templates }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        device = try c.value(.device, or: "fallguard")
        wearer = try c.decode(Wearer.self, forKey: .wearer)
        contacts = try c.value(.contacts, or: [])
        channels = try c.value(.channels, or: [:])
        policy = try c.value(.policy, or: NotificationPolicy())
        templates = try c.value(.templates, or: MessageTemplates())
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found = ConfigCheck.required(device, at: path + ["device"]) + wearer.problems(at: path + ["wearer"])
        for (i, contact) in contacts.enumerated() {
            found += contact.problems(at: path + ["contacts", String(i)])
        }
        for name in channels.keys.sorted() {
            found += channels[name]!.problems(at: path + ["channels", name])
        }
        found += policy.problems(at: path + ["policy"]) + templates.problems(at: path + ["templates"])
        found += routeProblems(at: path)
        return found
    }

    /// Unknown channels in the policy; routes that need contacts, and contacts without the
    /// address their channels need.
    private func routeProblems(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        for (key, route) in policy.routes {
            let routePath = path + ["policy", key]
            for ref in route.channelReferences(at: routePath) {
                guard let channel = channels[ref.name] else {
                    let known = channels.keys.sorted().joined(separator: ", ")
                    found.append(ConfigProblem(ref.path, "unknown channel '\(ref.name)' (configured: \(known.isEmpty ? "none" : known))"))
                    continue
                }
                let listedAsBroadcast = ref.path[ref.path.count - 2] == "broadcast"
                if listedAsBroadcast != (channel.addressing == .broadcast) {
                    found.append(ConfigProblem(ref.path, listedAsBroadcast
                        ? "channel '\(ref.name)' sends to a contact: list it under primary or others"
                        : "channel '\(ref.name)' has no recipient: list it under broadcast"))
                }
            }
            if !route.primary.isEmpty && contacts.isEmpty {
                found.append(ConfigProblem(path + ["contacts"], "policy '\(key)' sends to contacts, but none is configured"))
            }
        }
        found += addressProblems(at: path)
        return found
    }

    private func addressProblems(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        for (i, contact) in contacts.enumerated() {
            let names = policy.routes.flatMap { (i == 0 || $0.route.escalate ? $0.route.primary : []) + $0.route.others }
            let needs = Set(names.compactMap { channels[$0]?.addressing })
            if needs.contains(.phone) && contact.phone == nil {
                found.append(ConfigProblem(path + ["contacts", String(i), "phone"], "missing: the policy sends SMS or calls to this contact"))
            }
            if needs.contains(.email) && contact.email == nil {
                found.append(ConfigProblem(path + ["contacts", String(i), "email"], "missing: the policy sends e-mail to this contact"))
            }
        }
        return found
    }

    /// Every error (not warning) in the settings; empty means the notifiers may start.
    public var errors: [ConfigProblem] { problems(at: []).filter { $0.severity == .error } }
}
