import FallGuardConfigKeys
import FallGuardCore
import FallGuardMQTT
import FallGuardNotify
import Foundation

// The notifier sections at the top of the file (`device`, `wearer`, `contacts`, `channels`,
// `policy`, `templates`): their keys, defaults and checks. The values are Notify's.

extension NotificationSettings: KeyedSection {
    /// The defaults of the keys that have one (`wearer` has none).
    public init() { self.init(wearer: Wearer(name: ""), contacts: [], channels: [:]) }

    /// The keys; then every MQTT channel is named by the top-level `device:` when the file gives
    /// one (a bridge has one name, in topics too).
    public init(fromConfig decoder: any Decoder) throws {
        try self.init(keysFrom: decoder)
        if try decoder.container(keyedBy: ConfigKeyName.self).contains(ConfigKeyName("device")) {
            channels = channels.mapValues { options in
                guard var mqtt = options as? MQTTChannelSettings else { return options }
                mqtt.bridgeName = device
                return mqtt
            }
        }
    }

    public static var keys: [ConfigKey<Self>] {
        [.value("device", \.device), .section("wearer", \.wearer, required: true), .sections("contacts", \.contacts),
         .custom("channels", \.channels, read: { c, k in try c.sections([String: ChannelEntry].self, forKey: k)?.mapValues(\.options) },
                 write: { v, c, k in try c.encode(sections: v.mapValues(ChannelEntry.init), forKey: k) }),
         .section("policy", \.policy), .section("templates", \.templates)]
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var found = ConfigCheck.required(device, at: Self.at(path, \.device)) + ConfigCheck.printable(device, at: Self.at(path, \.device))
        for name in channels.keys.sorted() {
            found += ChannelEntry(channels[name]!).problems(at: Self.at(path, \.channels) + [name])
        }
        found += routeProblems(at: path) + fallbackProblems(at: path)
        for name in wearer.locationChannels ?? [] where channels[name] == nil {
            found.append(unknownChannel(name, at: Self.at(path, \.wearer, \.locationChannels)))
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
        // No channel and the policy left as it is: nobody will be told, which the file's check
        // says as a warning (DaemonFile); the default routes' `sms` and `call` are not missing.
        if channels.isEmpty && policy == NotificationPolicy() { return [] }
        var found: [ConfigProblem] = []
        for (key, route) in policy.routes {
            let routePath = Self.at(path, \.policy) + [key]
            for ref in route.channelReferences(at: routePath) {
                guard let channel = channels[ref.name] else {
                    found.append(unknownChannel(ref.name, at: ref.path))
                    continue
                }
                let listedAsBroadcast = ref.broadcast
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
                found.append(ConfigProblem(Self.at(path, \.contacts), "policy '\(key)' sends to contacts, but none is configured"))
            }
        }
        found += addressProblems(at: path)
        return found
    }

    /// A `fallback` names another channel that sends to a phone and has no fallback itself.
    private func fallbackProblems(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        for name in channels.keys.sorted() {
            guard let options = channels[name] as? any FallbackChannelOptions & KeyedSection,
                  let fallback = options.fallback else { continue }
            let at = options.fallbackPath(Self.at(path, \.channels) + [name])
            guard let other = channels[fallback] else {
                found.append(unknownChannel(fallback, at: at))
                continue
            }
            if fallback == name {
                found.append(ConfigProblem(at, "a channel cannot be its own fallback"))
            } else if other.addressing != .phone {
                found.append(ConfigProblem(at, "channel '\(fallback)' does not send to a phone: a fallback must (a 'modem' channel)"))
            } else if (other as? any FallbackChannelOptions)?.fallback != nil {
                found.append(ConfigProblem(at, "channel '\(fallback)' has a fallback of its own: fallbacks do not chain"))
            }
        }
        return found
    }

    /// The routes of alerts that must reach someone: a fall and a call for help.
    static let alarmRoutes: Set<String> = ["fall", "help-requested"]

    private func addressProblems(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        for (i, contact) in contacts.enumerated() {
            let names = policy.routes.flatMap { (i == 0 || $0.route.escalate ? $0.route.primary : []) + $0.route.others }
            let needs = Set(names.compactMap { channels[$0]?.addressing })
            if needs.contains(.phone) && contact.phone == nil {
                found.append(ConfigProblem(Recipient.at(Self.at(path, \.contacts) + [String(i)], \.phone), "missing: the policy sends SMS or calls to this contact"))
            }
            if needs.contains(.email) && contact.email == nil {
                found.append(ConfigProblem(Recipient.at(Self.at(path, \.contacts) + [String(i)], \.email), "missing: the policy sends e-mail to this contact"))
            }
        }
        return found
    }

    /// Every error (not warning) in the settings; empty means the notifiers may start.
    public var errors: [ConfigProblem] { problems(at: []).filter { $0.severity == .error } }
}

/// `contacts:` — in order: the first is the primary contact, escalation goes down the list.
extension Recipient: KeyedSection {
    public init() { self.init(name: "") }

    public static var keys: [ConfigKey<Self>] {
        [.value("name", \.name, required: true), .optional("phone", \.phone), .optional("email", \.email)]
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var found = ConfigCheck.required(name, at: Self.at(path, \.name)) + ConfigCheck.printable(name, at: Self.at(path, \.name))
        if let phone { found += ConfigCheck.phone(phone, at: Self.at(path, \.phone)) }
        if let email { found += ConfigCheck.email(email, at: Self.at(path, \.email)) }
        if phone == nil && email == nil {
            found.append(ConfigProblem(path, "a contact needs a phone or an e-mail address"))
        }
        return found
    }
}

/// `wearer:` — `name`, `location` (default empty) and `location-channels` (default: the
/// channels that send to a contact).
extension Wearer: KeyedSection {
    public init() { self.init(name: "") }

    public static var keys: [ConfigKey<Self>] {
        [.value("name", \.name, required: true), .value("location", \.location), .optional("location-channels", \.locationChannels)]
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        ConfigCheck.required(name, at: Self.at(path, \.name)) + ConfigCheck.printable(name, at: Self.at(path, \.name))
            + ConfigCheck.printable(location, at: Self.at(path, \.location))
    }
}

/// `policy:` — a route per alert kind, `acknowledge-within`, `heartbeat-at` and `retry`.
extension NotificationPolicy: KeyedSection {
    public init() { self.init(fall: .alarm) }

    public static var keys: [ConfigKey<Self>] {
        [.section("fall", \.fall), .section("help-requested", \.helpRequested), .section("recovered-fall", \.recoveredFall),
         .section("resolved", \.resolved),
         .section("device-problem", \.deviceProblem), .section("heartbeat", \.heartbeat),
         .value("acknowledge-within", \.acknowledgeWithin, in: 10...86_400, unit: " s"), .value("heartbeat-at", \.heartbeatAt),
         .section("retry", \.retry)]
    }

    /// Each route with its key.
    var routes: [(key: String, route: AlertRoute)] {
        Self.keys.compactMap { key in (self[keyPath: key.property] as? AlertRoute).map { (key.name, $0) } }
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        heartbeatTime == nil ? [ConfigProblem(Self.at(path, \.heartbeatAt), "'\(heartbeatAt)' is not a time of day HH:MM")] : []
    }
}

/// A route: `{primary, others, broadcast, escalate, deadline}`; absent keys keep the route's
/// own defaults.
extension AlertRoute: KeyedSection {
    public init() { self.init(primary: []) }

    public static var keys: [ConfigKey<Self>] {
        [.value("primary", \.primary), .value("others", \.others), .value("broadcast", \.broadcast),
         .value("escalate", \.escalate), .value("deadline", \.deadline, in: 10...7 * 86_400, unit: " s")]
    }

    /// Every channel name with its key path, and whether it is listed under `broadcast`.
    func channelReferences(at path: [String]) -> [(name: String, path: [String], broadcast: Bool)] {
        [(\Self.primary, primary), (\.others, others), (\.broadcast, broadcast)].flatMap { key, names in
            names.enumerated().map { (name: $1, path: Self.at(path, key) + [String($0)], broadcast: key == \.broadcast) }
        }
    }
}

/// `policy.retry:` — `{initial, max, jitter}`.
extension RetrySettings: KeyedSection {
    public init() { self.init(initial: 1) }

    public static var keys: [ConfigKey<Self>] {
        [.value("initial", \.initial, in: 0.01...3600, unit: " s"), .value("max", \.max, in: 0.01...86_400, unit: " s"),
         .value("jitter", \.jitter, in: 0...1)]
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        // Compared, not made a range: `initial...86_400` trapped when initial was above a day.
        guard initial.isFinite, max.isFinite, max < initial else { return [] }
        return [ConfigProblem(Self.at(path, \.max), "\(max) s is shorter than initial (\(initial) s)")]
    }
}

/// `templates:` — a body per alert kind (`fall`, `help-requested`, …) and `sms-limit`.
extension MessageTemplates: KeyedSection {
    public init() { self.init(bodies: [:]) }

    public static var keys: [ConfigKey<Self>] {
        [.value("sms-limit", \.smsLimit, in: 70...1600)] + AlertKind.allCases.map { kind in .optional(kind.rawValue, \.bodies[kind], nullWhenUnset: false) }
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        for kind in AlertKind.allCases {
            guard let text = bodies[kind] else { continue }
            for name in Self.placeholderNames(in: text) where !Self.placeholders.contains(name) {
                found.append(ConfigProblem(Self.at(path, \.bodies[kind]), "unknown placeholder {\(name)} (known: \(Self.placeholders.map { "{\($0)}" }.joined(separator: " ")))"))
            }
        }
        return found
    }
}
