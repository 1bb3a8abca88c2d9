import AsyncHTTPClient
import FallGuardConfig
import FallGuardCore
import FallGuardNotify
import FallGuardStation
import Foundation
import Logging

/// The station's escalations (issue 37 item 4): once a second, the calls late now
/// (``StationHistory/escalate(now:acceptWithin:presenceWithin:)``: nobody accepted, or nobody
/// present) are marked in the history first, then told to the on-call contact through the
/// station's own channels (the bridge's notifiers: Twilio SMS or call, webhook, ntfy, …), each
/// channel tried again on a transient failure for `retryFor` seconds. The pages learn of them
/// from the history (every page's louder tone).
final class StationEscalation: Sendable {
    let settings: StationSection.Escalation
    /// The on-call contact's channels, by name (built when ``run()`` starts).
    private let options: [(name: String, options: any ChannelOptions)]
    private let history: StationHistory
    private let logger: Logger
    /// Seconds a delivery to the on-call contact is tried again after a transient failure.
    static let retryFor = 120.0

    init(section: StationSection, history: StationHistory, logger: Logger) {
        settings = section.escalation
        self.history = history
        self.logger = logger
        options = (settings.onCall?.channels ?? []).compactMap { name in section.channels[name].map { (name, $0) } }
    }

    /// What the on-call contact is told.
    static func message(_ r: PastIncidents.Record, why: PastIncidents.Escalation, settings: StationSection.Escalation) -> RenderedMessage {
        let who = [r.wearer, r.location].compactMap { $0 }.joined(separator: ", ")
        let what = (r.kind ?? "alarm").replacingOccurrences(of: "-", with: " ")
        let bridge = r.device + (who.isEmpty ? "" : " (\(who))")
        switch why {
        case .unaccepted:
            return RenderedMessage(subject: "FallGuard escalation: nobody has accepted \(bridge)",
                                   body: "FallGuard station: the \(what) alarm \(r.incident ?? "") of \(bridge) has not been accepted by anyone for \(Int(settings.acceptWithin)) s. Please go or call the unit.")
        case .noPresence:
            return RenderedMessage(subject: "FallGuard escalation: nobody at \(bridge)",
                                   body: "FallGuard station: \(r.acknowledgedBy ?? "someone") accepted the \(what) alarm \(r.incident ?? "") of \(bridge), but nobody has confirmed being there for \(Int(settings.presenceWithin / 60)) min. Please check.")
        }
    }

    /// Checks once; returns the escalations it started (their deliveries go on in `tasks`).
    func check(now: Double, channels: [any NotificationChannel], tasks: inout DiscardingTaskGroup)
        -> [(record: PastIncidents.Record, why: PastIncidents.Escalation)] {
        let due = history.escalate(now: now, acceptWithin: settings.acceptWithin, presenceWithin: settings.presenceWithin)
        for (r, why) in due {
            logger.critical("station: \(r.device) \(r.incident ?? "") escalated (\(why.rawValue))\(channels.isEmpty ? ": no on-call contact configured, the pages only" : "")")
            guard let onCall = settings.onCall else { continue }
            let payload = AlertPayload(
                idempotencyKey: "station-\(r.key)-\(why.rawValue)", test: false, device: r.device,
                wearer: Wearer(name: r.wearer ?? r.device, location: r.location ?? ""),
                alert: Alert(kind: r.kind == "help-requested" ? .helpRequested : .fall, incident: r.incident ?? r.key, time: now),
                message: Self.message(r, why: why, settings: settings), sentAt: iso8601(secondsSince1970: now))
            let recipient = Recipient(name: onCall.name, phone: onCall.phone, email: onCall.email)
            for channel in channels {
                let delivery = Delivery(channel: channel.name, recipient: recipient, payload: payload)
                tasks.addTask { [logger] in await Self.deliver(delivery, through: channel, logger: logger) }
            }
        }
        return due
    }

    /// One delivery, tried again on transient failures for ``retryFor`` seconds.
    static func deliver(_ delivery: Delivery, through channel: any NotificationChannel, logger: Logger) async {
        let start = Date()
        var wait = 1.0
        while !Task.isCancelled {
            do {
                let receipt = try await channel.send(delivery)
                logger.notice("station: escalation told to \(delivery.recipient?.name ?? "on call") through \(channel.name): \(receipt.detail)")
                return
            } catch let DeliveryFailure.permanent(why) {
                logger.critical("station: the escalation could not be told through \(channel.name): \(why)")
                return
            } catch {
                guard Date().timeIntervalSince(start) + wait < retryFor else {
                    logger.critical("station: the escalation could not be told through \(channel.name) in \(Int(retryFor)) s: \(error)")
                    return
                }
                try? await Task.sleep(for: .seconds(wait))
                wait = min(wait * 2, 16)
            }
        }
    }

    /// Once a second until cancelled.
    func run() async {
        let client = HTTPClient(eventLoopGroupProvider: .singleton,
                                configuration: .init(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5))))
        let context = ChannelContext(httpClient: client, logger: logger)
        var channels: [any NotificationChannel] = []
        for (name, options) in options {
            do { channels.append(try options.makeChannel(named: name, context: context)) } catch {
                logger.critical("station: channel '\(name)' for the on-call contact cannot start: \(error)")
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
