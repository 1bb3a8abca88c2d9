import FallGuardCore
import FallGuardNotify
import Foundation

// The notifier sections at the top of the file (`device`, `wearer`, `contacts`, `channels`,
// `policy`, `templates`): their keys, defaults and checks. The values are Notify's.

extension NotificationSettings: ConfigSection {
    enum CodingKeys: String, CodingKey, CaseIterable { case device, wearer, contacts, channels, policy, templates }

    /// The defaults of the keys that have one (`wearer` has none).
    static let defaults = NotificationSettings(wearer: Wearer(name: ""), contacts: [], channels: [:])

    public init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Self.defaults
        self.init(device: try c.value(.device, default: d.device),
                  wearer: try c.decode(Configured<Wearer>.self, forKey: .wearer).value,
                  contacts: try c.sections([Recipient].self, forKey: .contacts) ?? d.contacts,
                  channels: try c.sections([String: ChannelEntry].self, forKey: .channels)?.mapValues(\.options) ?? d.channels,
                  policy: try c.section(NotificationPolicy.self, forKey: .policy) ?? d.policy,
                  templates: try c.section(MessageTemplates.self, forKey: .templates) ?? d.templates)
        if c.contains(.device) { channels = channels.namingMQTTBridges(device) }
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(device, forKey: .device)
        try c.encode(section: wearer, forKey: .wearer)
        try c.encode(sections: contacts, forKey: .contacts)
        try c.encode(sections: channels.mapValues(ChannelEntry.init), forKey: .channels)
        try c.encode(section: policy, forKey: .policy)
        try c.encode(section: templates, forKey: .templates)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found = ConfigCheck.required(device, at: path + ["device"]) + ConfigCheck.printable(device, at: path + ["device"])
            + wearer.problems(at: path + ["wearer"])
        for (i, contact) in contacts.enumerated() {
            found += contact.problems(at: path + ["contacts", String(i)])
        }
        for name in channels.keys.sorted() {
            found += ChannelEntry(channels[name]!).problems(at: path + ["channels", name])
        }
        found += policy.problems(at: path + ["policy"]) + templates.problems(at: path + ["templates"])
        found += routeProblems(at: path)
        for name in wearer.locationChannels ?? [] where channels[name] == nil {
            found.append(unknownChannel(name, at: path + ["wearer", "location-channels"]))
        }
        return found
    }

    /// `name` is not under `channels:`.
    private func unknownChannel(_ name: String, at path: [String]) -> ConfigProblem {
        let known = channels.keys.sorted().joined(separator: ", ")
        return ConfigProblem(path, "unknown channel '\(name)' (configured: \(known.isEmpty ? "none" : known))")
    }

    /// Unknown channels in the policy; routes that need contacts, and contacts without the
    /// address their channels need.
    private func routeProblems(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        for (key, route) in policy.routes {
            let routePath = path + ["policy", key]
            for ref in route.channelReferences(at: routePath) {
                guard let channel = channels[ref.name] else {
                    found.append(unknownChannel(ref.name, at: ref.path))
                    continue
                }
                let listedAsBroadcast = ref.path[ref.path.count - 2] == "broadcast"
                if listedAsBroadcast != (channel.addressing == .broadcast) {
                    found.append(ConfigProblem(ref.path, listedAsBroadcast
                        ? "channel '\(ref.name)' sends to a contact: list it under primary or others"
                        : "channel '\(ref.name)' has no recipient: list it under broadcast"))
                }
            }
            if Self.alarmRoutes.contains(key), route.primary.isEmpty, route.others.isEmpty, route.broadcast.isEmpty {
                found.append(ConfigProblem(routePath, "lists no channel: nobody would be told (name channels in primary, others or broadcast)"))
            }
            if !route.primary.isEmpty && contacts.isEmpty {
                found.append(ConfigProblem(path + ["contacts"], "policy '\(key)' sends to contacts, but none is configured"))
            }
        }
        found += addressProblems(at: path)
        return found
    }

    /// The routes of alerts that must reach someone: a fall and a call for help.
    static let alarmRoutes: Set<String> = [NotificationPolicy.CodingKeys.fall.rawValue, NotificationPolicy.CodingKeys.helpRequested.rawValue]

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

/// `contacts:` — in order: the first is the primary contact, escalation goes down the list.
extension Recipient: ConfigSection {
    enum ConfigKeys: String, CodingKey { case name, phone, email }

    public init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: ConfigKeys.self)
        self.init(name: try c.decode(String.self, forKey: .name), phone: try c.decodeIfPresent(String.self, forKey: .phone),
                  email: try c.decodeIfPresent(String.self, forKey: .email))
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ConfigKeys.self)
        try c.encode(name, forKey: .name)
        try c.encodeIfPresent(phone, forKey: .phone)
        try c.encodeIfPresent(email, forKey: .email)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found = ConfigCheck.required(name, at: path + ["name"]) + ConfigCheck.printable(name, at: path + ["name"])
        if let phone { found += ConfigCheck.phone(phone, at: path + ["phone"]) }
        if let email { found += ConfigCheck.email(email, at: path + ["email"]) }
        if phone == nil && email == nil {
            found.append(ConfigProblem(path, "a contact needs a phone or an e-mail address"))
        }
        return found
    }
}

/// `wearer:` — `name`, `location` (default empty) and `location-channels` (default: the
/// channels that send to a contact).
extension Wearer: ConfigSection {
    enum ConfigKeys: String, CodingKey { case name, location, locationChannels = "location-channels" }

    public init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: ConfigKeys.self)
        let name = try c.decode(String.self, forKey: .name)
        self.init(name: name, location: try c.value(.location, default: Wearer(name: name).location),
                  locationChannels: try c.decodeIfPresent([String].self, forKey: .locationChannels))
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ConfigKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(location, forKey: .location)
        try c.encodeOptional(locationChannels, forKey: .locationChannels)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        ConfigCheck.required(name, at: path + ["name"]) + ConfigCheck.printable(name, at: path + ["name"])
            + ConfigCheck.printable(location, at: path + ["location"])
    }
}

/// `policy:` — a route per alert kind, `acknowledge-within`, `heartbeat-at` and `retry`.
extension NotificationPolicy: ConfigSection {
    enum CodingKeys: String, CodingKey {
        case fall, helpRequested = "help-requested", resolved, deviceProblem = "device-problem", heartbeat
        case acknowledgeWithin = "acknowledge-within", heartbeatAt = "heartbeat-at", retry
    }

    public init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = NotificationPolicy()
        self.init(fall: try AlertRoute.decode(c, .fall, defaults: d.fall),
                  helpRequested: try AlertRoute.decode(c, .helpRequested, defaults: d.helpRequested),
                  resolved: try AlertRoute.decode(c, .resolved, defaults: d.resolved),
                  deviceProblem: try AlertRoute.decode(c, .deviceProblem, defaults: d.deviceProblem),
                  heartbeat: try AlertRoute.decode(c, .heartbeat, defaults: d.heartbeat),
                  acknowledgeWithin: try c.value(.acknowledgeWithin, default: d.acknowledgeWithin),
                  heartbeatAt: try c.value(.heartbeatAt, default: d.heartbeatAt),
                  retry: try c.section(RetrySettings.self, forKey: .retry) ?? d.retry)
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        for (key, route) in [(CodingKeys.fall, fall), (.helpRequested, helpRequested), (.resolved, resolved),
                             (.deviceProblem, deviceProblem), (.heartbeat, heartbeat)] {
            try route.encode(into: &c, key)
        }
        try c.encode(acknowledgeWithin, forKey: .acknowledgeWithin)
        try c.encode(heartbeatAt, forKey: .heartbeatAt)
        try c.encode(section: retry, forKey: .retry)
    }

    /// Each route with its key.
    var routes: [(key: String, route: AlertRoute)] {
        [(CodingKeys.fall, fall), (.helpRequested, helpRequested), (.resolved, resolved),
         (.deviceProblem, deviceProblem), (.heartbeat, heartbeat)].map { ($0.0.rawValue, $0.1) }
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        for (key, route) in routes {
            found += ConfigCheck.seconds(route.deadline, in: 10...7 * 86_400, at: path + [key, "deadline"])
        }
        found += ConfigCheck.seconds(acknowledgeWithin, in: 10...86_400, at: path + ["acknowledge-within"])
        if heartbeatMinute == nil {
            found.append(ConfigProblem(path + ["heartbeat-at"], "'\(heartbeatAt)' is not a time of day HH:MM"))
        }
        found += retry.problems(at: path + ["retry"])
        return found
    }
}

/// A route: `{primary, others, broadcast, escalate, deadline}`; absent keys keep the route's
/// own defaults.
extension AlertRoute {
    enum CodingKeys: String, CodingKey { case primary, others, broadcast, escalate, deadline }

    /// Decodes the route at `key`, taking every absent key from `defaults`.
    static func decode<K: CodingKey>(_ c: KeyedDecodingContainer<K>, _ key: K, defaults: AlertRoute) throws -> AlertRoute {
        guard c.contains(key) else { return defaults }
        let r = try c.nestedContainer(keyedBy: CodingKeys.self, forKey: key)
        return AlertRoute(primary: try r.value(.primary, default: defaults.primary),
                          others: try r.value(.others, default: defaults.others),
                          broadcast: try r.value(.broadcast, default: defaults.broadcast),
                          escalate: try r.value(.escalate, default: defaults.escalate),
                          deadline: try r.value(.deadline, default: defaults.deadline))
    }

    func encode<K: CodingKey>(into c: inout KeyedEncodingContainer<K>, _ key: K) throws {
        var r = c.nestedContainer(keyedBy: CodingKeys.self, forKey: key)
        try r.encode(primary, forKey: .primary)
        try r.encode(others, forKey: .others)
        try r.encode(broadcast, forKey: .broadcast)
        try r.encode(escalate, forKey: .escalate)
        try r.encode(deadline, forKey: .deadline)
    }

    /// Every channel name with its key path.
    func channelReferences(at path: [String]) -> [(name: String, path: [String])] {
        [(CodingKeys.primary, primary), (.others, others), (.broadcast, broadcast)].flatMap { key, names in
            names.enumerated().map { (name: $1, path: path + [key.rawValue, String($0)]) }
        }
    }
}

/// `policy.retry:` — `{initial, max, jitter}`.
extension RetrySettings: ConfigSection {
    enum CodingKeys: String, CodingKey { case initial, max, jitter }

    public init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = RetrySettings()
        self.init(initial: try c.value(.initial, default: d.initial), max: try c.value(.max, default: d.max),
                  jitter: try c.value(.jitter, default: d.jitter))
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(initial, forKey: .initial)
        try c.encode(max, forKey: .max)
        try c.encode(jitter, forKey: .jitter)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found = ConfigCheck.seconds(initial, in: 0.01...3600, at: path + ["initial"])
        found += ConfigCheck.seconds(max, in: 0.01...86_400, at: path + ["max"])
        // Compared, not made a range: `initial...86_400` trapped when initial was above a day.
        if initial.isFinite, max.isFinite, max < initial {
            found.append(ConfigProblem(path + ["max"], "\(max) s is shorter than initial (\(initial) s)"))
        }
        if !(0...1).contains(jitter) {
            found.append(ConfigProblem(path + ["jitter"], "\(jitter) is outside 0...1"))
        }
        return found
    }
}

/// `templates:` — a body per alert kind (`fall`, `help-requested`, …) and `sms-limit`.
extension MessageTemplates: ConfigSection {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
        static let smsLimit = Key(stringValue: "sms-limit")
    }

    public init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        var bodies: [AlertKind: String] = [:]
        for kind in AlertKind.allCases {
            if let text = try c.decodeIfPresent(String.self, forKey: Key(stringValue: kind.rawValue)) { bodies[kind] = text }
        }
        self.init(bodies: bodies, smsLimit: try c.value(.smsLimit, default: MessageTemplates().smsLimit))
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(smsLimit, forKey: .smsLimit)
        for (kind, text) in bodies { try c.encode(text, forKey: Key(stringValue: kind.rawValue)) }
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        if !(70...1600).contains(smsLimit) { found.append(ConfigProblem(path + ["sms-limit"], "\(smsLimit) is outside 70...1600")) }
        for kind in AlertKind.allCases {
            guard let text = bodies[kind] else { continue }
            for name in Self.placeholderNames(in: text) where !Self.placeholders.contains(name) {
                found.append(ConfigProblem(path + [kind.rawValue], "unknown placeholder {\(name)} (known: \(Self.placeholders.map { "{\($0)}" }.joined(separator: " ")))"))
            }
        }
        return found
    }
}
