import AsyncHTTPClient
import FallGuardConfig
import FallGuardCore
import FallGuardNotify
import FallGuardStation
import Foundation
import Logging

/// The station's escalations (issue 37 item 4): once a second, the calls late now
/// (``StationHistory/escalate(now:acceptWithin:presenceWithin:againAfter:deliveries:)``: nobody
/// accepted, or nobody present; and, `escalate-again-after` later, still nobody: the second tier)
/// are marked in the history with their messages to the on-call contact (the second tier: the
/// senior contact) in one write, then sent through the station's own channels (the bridge's
/// notifiers: Twilio SMS or call, webhook, ntfy, …). A message is marked sent only once its
/// channel took it; a transient failure is tried again (1, 2, 4 … 60 s apart) for `retryFor`
/// seconds, across restarts of the station (the messages wait in `station.sqlite`). The pages
/// learn of escalations from the history (every page's louder tone).
final class StationEscalation: Sendable {
    let settings: StationSection.Escalation
    /// The station's channels the contacts use, by name (built when ``run()`` starts).
    private let options: [(name: String, options: any ChannelOptions)]
    private let history: StationHistory
    private let logger: Logger
    /// Seconds an escalation's message is tried again after transient failures.
    static let retryFor = 1_800.0

    init(section: StationSection, history: StationHistory, logger: Logger) {
        settings = section.escalation
        self.history = history
        self.logger = logger
        let names = Set((section.escalation.onCall?.channels ?? []) + (section.escalation.senior?.channels ?? []))
        options = names.sorted().compactMap { name in section.channels[name].map { (name, $0) } }
    }

    /// What the contact is told.
    static func message(_ r: PastIncidents.Record, why: PastIncidents.Escalation, settings: StationSection.Escalation) -> RenderedMessage {
        let who = [r.wearer, r.location].compactMap { $0 }.joined(separator: ", ")
        let what = (r.kind ?? "alarm").replacingOccurrences(of: "-", with: " ")
        let bridge = r.device + (who.isEmpty ? "" : " (\(who))")
        let again = why.isSecondTier ? " The on-call contact was told \(Int(settings.escalateAgainAfter)) s ago." : ""
        switch why {
        case .unaccepted, .unacceptedAgain:
            let late = Int(settings.acceptWithin + (why.isSecondTier ? settings.escalateAgainAfter : 0))
            return RenderedMessage(subject: "FallGuard escalation\(why.isSecondTier ? " (second)" : ""): nobody has accepted \(bridge)",
                                   body: "FallGuard station: the \(what) alarm \(r.incident ?? "") of \(bridge) has not been accepted by anyone for \(late) s.\(again) Please go or call the unit.")
        case .noPresence, .noPresenceAgain:
            let late = Int((settings.presenceWithin + (why.isSecondTier ? settings.escalateAgainAfter : 0)) / 60)
            return RenderedMessage(subject: "FallGuard escalation\(why.isSecondTier ? " (second)" : ""): nobody at \(bridge)",
                                   body: "FallGuard station: \(r.acknowledgedBy ?? "someone") accepted the \(what) alarm \(r.incident ?? "") of \(bridge), but nobody has confirmed being there for \(late) min.\(again) Please check.")
        }
    }

    /// The messages of one escalation: one per channel of its contact.
    func deliveries(_ r: PastIncidents.Record, why: PastIncidents.Escalation, now: Double) -> [Delivery] {
        guard let contact = why.isSecondTier ? settings.secondTier : settings.onCall else { return [] }
        let payload = AlertPayload(
            idempotencyKey: "station-\(r.key)-\(why.rawValue)", test: false, device: r.device,
            wearer: Wearer(name: r.wearer ?? r.device, location: r.location ?? ""),
            alert: Alert(kind: r.kind == "help-requested" ? .helpRequested : .fall, incident: r.incident ?? r.key, time: now),
            message: Self.message(r, why: why, settings: settings), sentAt: iso8601(secondsSince1970: now))
        let recipient = Recipient(name: contact.name, phone: contact.phone, email: contact.email)
        return contact.channels.map { Delivery(channel: $0, recipient: recipient, payload: payload) }
    }

    /// Checks once: marks the calls late now with their messages, and sends the messages due
    /// (their outcomes go on in `tasks`). Returns the escalations it started.
    func check(now: Double, channels: [String: any NotificationChannel], tasks: inout DiscardingTaskGroup)
        -> [(record: PastIncidents.Record, why: PastIncidents.Escalation)] {
        let due = history.escalate(now: now, acceptWithin: settings.acceptWithin, presenceWithin: settings.presenceWithin,
                                   againAfter: settings.escalateAgainAfter) { r, why in deliveries(r, why: why, now: now) }
        for (r, why) in due {
            let contact = why.isSecondTier ? settings.secondTier : settings.onCall
            logger.critical("station: \(r.device) \(r.incident ?? "") escalated (\(why.rawValue))\(contact == nil ? ": no contact configured, the pages only" : ": telling \(contact!.name)")")
        }
        for pending in history.dueDeliveries(now: now) {
            tasks.addTask { [history, logger] in
                await Self.attempt(pending, through: channels[pending.delivery.channel], history: history, logger: logger)
            }
        }
        return due
    }

    /// One attempt at one message: sent (marked so), or tried again later, or given up.
    static func attempt(_ pending: StationHistory.EscalationDelivery, through channel: (any NotificationChannel)?,
                        history: StationHistory, logger: Logger) async {
        let who = pending.delivery.recipient?.name ?? "on call"
        let name = pending.delivery.channel
        func again(_ why: String) {
            let now = Date().timeIntervalSince1970
            let wait = min(60, pow(2, Double(pending.attempts)))
            if now + wait - pending.createdAt < retryFor {
                history.failed(pending.id, at: now, detail: why, retryAt: now + wait)
            } else {
                logger.critical("station: the escalation could not be told to \(who) through \(name) in \(Int(retryFor)) s: \(why)")
                history.failed(pending.id, at: now, detail: why, retryAt: nil)
            }
        }
        guard let channel else { return again("channel '\(name)' cannot start") }
        do {
            let receipt = try await channel.send(pending.delivery)
            history.sent(pending.id, at: Date().timeIntervalSince1970, detail: receipt.detail)
            logger.notice("station: escalation told to \(who) through \(name): \(receipt.detail)")
        } catch let DeliveryFailure.permanent(why) {
            logger.critical("station: the escalation could not be told to \(who) through \(name): \(why)")
            history.failed(pending.id, at: Date().timeIntervalSince1970, detail: why, retryAt: nil)
        } catch {
            again("\(error)")
        }
    }

    /// Once a second until cancelled.
    func run() async {
        let client = HTTPClient(eventLoopGroupProvider: .singleton,
                                configuration: .init(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5))))
        let context = ChannelContext(httpClient: client, logger: logger)
        var channels: [String: any NotificationChannel] = [:]
        for (name, options) in options {
            do { channels[name] = try options.makeChannel(named: name, context: context) } catch {
                logger.critical("station: channel '\(name)' for the escalations cannot start: \(error)")
            }
        }
        await withDiscardingTaskGroup { tasks in
            while !Task.isCancelled {
                _ = check(now: Date().timeIntervalSince1970, channels: channels, tasks: &tasks)
                try? await Task.sleep(for: .seconds(1))
            }
            tasks.cancelAll()
        }
        try? await client.shutdown()
    }
}
