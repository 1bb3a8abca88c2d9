import AsyncHTTPClient
import FallGuardCore
import Foundation
import Logging
import NIOCore
import Synchronization

/// Closes the loop with the caregivers through nothing but the provider's REST API (a Pi at
/// home has no address for webhooks): follows each alarm call to its end and escalates at once
/// when it reached nobody, and reads the contacts' SMS replies while an alarm is open.
///
/// It asks the provider only while something is open: a call not ended yet (polled every
/// `call-poll-interval`), an alarm nobody acknowledged (its replies read every
/// `reply-poll-interval`). A provider error is retried with the delivery backoff, never sooner
/// than the interval. Nothing it logs carries a credential: texts pass the accounts' redactor.
public final class CaregiverFollowUp: Sendable {
    let outbox: Outbox
    let client: HTTPClient
    let inbox: AcknowledgementInbox
    let logger: Logger
    /// The modem's calls being followed: when first seen, and when seen answered.
    let modemCalls = Mutex<[String: (seen: Double, answered: Double?)]>([:])
    /// The SMS that were on the modems when an alarm was first open (nil while none is):
    /// ``readModemReplies(_:)`` never takes them for a reply to it.
    let modemBaseline = Mutex<Set<String>?>(nil)
    /// How long after an alarm its calls and replies are still followed.
    public static let window: Double = 3600
    /// A reply counts for an alarm when the provider dated it no earlier than the second in
    /// which our message to that contact went out (the provider dates to whole seconds). A Pi
    /// whose clock runs ahead by more than a person takes to read and answer would ignore
    /// acknowledgements, and escalation would go on: the safe way to be wrong.
    static func counts(_ sent: Double, after told: Double) -> Bool { sent >= told.rounded(.down) }

    public init(outbox: Outbox, client: HTTPClient, inbox: AcknowledgementInbox, logger: Logger = Logger(label: "fallguard.follow-up")) {
        (self.outbox, self.client, self.inbox, self.logger) = (outbox, client, inbox, logger)
    }

    /// Polls until cancelled: the provider's calls and replies in one loop, the modem's in
    /// another, so that a hung ModemManager (each `mmcli` run waits out its timeout) never holds
    /// back the escalation of a Twilio call that reached nobody, nor a Twilio SMS reply.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.followTheProvider() }
            group.addTask { await self.followTheModem() }
        }
    }

    /// The modem's calls and replies, while a `modem` channel is configured.
    private func followTheModem() async {
        var modem = Schedule()
        while !Task.isCancelled {
            let modemWork = modemWork()
            if let interval = modemWork.interval {
                await modem.poll(every: interval, "follow the modem's calls and replies", self, []) { try await followModem(modemWork) }
            }
            let wait = modemWork.interval == nil ? 5 : min(max(modem.next - outbox.now(), 0.25), 5)
            try? await Task.sleep(for: .milliseconds(Int(wait * 1000)))
        }
    }

    /// The provider's (Twilio's) calls and SMS replies.
    private func followTheProvider() async {
        var calls = Schedule(), replies = Schedule()
        while !Task.isCancelled {
            let channels = outbox.settings.channels
            let call = channels.compactMapValues { $0 as? TwilioCallOptions }.filter(\.value.followCalls)
            let sms = channels.compactMapValues { $0 as? TwilioSMSOptions }.filter(\.value.readReplies)
            if !call.isEmpty {
                await calls.poll(every: call.values.map(\.callPollInterval).min() ?? 5, "follow the calls", self,
                                 call.values.map(\.account)) { try await followCalls(call) }
            }
            if !sms.isEmpty {
                await replies.poll(every: sms.values.map(\.replyPollInterval).min() ?? 10, "read the SMS replies", self,
                                   sms.values.map(\.account)) { try await readReplies(sms) }
            }
            // Asleep until the next poll is due (at most 5 s, so that a reload's new channels are
            // seen): no wake-ups of its own on a bridge without a provider to ask.
            let due = (call.isEmpty ? [] : [calls.next]) + (sms.isEmpty ? [] : [replies.next])
            let wait = due.min().map { min(max($0 - outbox.now(), 0.25), 5) } ?? 5
            try? await Task.sleep(for: .milliseconds(Int(wait * 1000)))
        }
    }

    /// When one kind of poll is next due, and how many failed in a row (the delivery backoff).
    struct Schedule {
        var next = 0.0
        var failures = 0

        mutating func poll(every interval: Double, _ what: String, _ f: CaregiverFollowUp, _ accounts: [TwilioAccount],
                           _ body: () async throws -> Void) async {
            let t = f.outbox.now()
            guard t >= next else { return }
            do {
                try await body()
                failures = 0
                next = t + interval
            } catch {
                failures += 1
                // Backing off never asks more often than the interval.
                next = t + max(interval, f.outbox.settings.policy.retry.delay(afterAttempts: failures, random: .random(in: 0...1)))
                let text = SecretRedactor(secrets: accounts.flatMap(\.secrets)).redact("\(error)")
                f.logger.warning("cannot \(what) (again in \(Int(next - t)) s): \(text)")
            }
        }
    }

    // MARK: Calls

    /// Reads every call not ended yet once; stores the outcome of those that ended. A call the
    /// provider refuses to show (404, say) is taken as not reached: nobody can tell that a person
    /// answered it. A transient failure is thrown after the other calls were read.
    func followCalls(_ channels: [String: TwilioCallOptions]) async throws {
        var transient: (any Error)?
        for call in try outbox.callsToFollow(channels: Set(channels.keys), window: Self.window) {
            guard let account = channels[call.channel]?.account else { continue }
            do {
                let state: TwilioCall = try await get(account.url("Calls/\(call.sid).json"), account: account)
                if let outcome = state.outcome { try outbox.record(outcome, of: call) }
            } catch let DeliveryFailure.permanent(why) {
                try outbox.record(.notReached("not shown by the provider: \(SecretRedactor(secrets: account.secrets).redact(why))"), of: call)
            } catch {
                transient = transient ?? error
            }
        }
        if let transient { throw transient }
    }

    // MARK: Replies

    /// Reads the inbound messages to each sending number since the oldest open alarm began and
    /// takes each new one once.
    func readReplies(_ channels: [String: TwilioSMSOptions]) async throws {
        let open = try outbox.openIncidents(window: Self.window)
        guard !open.isEmpty else { return }
        let earliest = open.flatMap(\.toldAt.values).min() ?? outbox.now()
        // One read per sending number, whichever channels share it.
        var accounts: [String: (TwilioAccount, ReplyReader)] = [:]
        for (_, o) in channels.sorted(by: { $0.key < $1.key }) where accounts["\(o.account.url(""))|\(o.account.from)"] == nil {
            accounts["\(o.account.url(""))|\(o.account.from)"] = (o.account, ReplyReader(words: o.acknowledgeWords))
        }
        for (account, reader) in accounts.values {
            // `DateSent>=YYYY-MM-DD` (whole UTC days, a day early for the clocks' sake): the exact
            // time is checked here, against when each contact was told.
            let query = HTTPDelivery.formEncoded([("To", account.from), ("DateSent>", RFC2822.day(earliest - 86400)), ("PageSize", "100")])
            let page: TwilioMessage.Page = try await get(account.url("Messages.json") + "?" + query, account: account)
            for m in page.messages.reversed() where m.direction == "inbound" {
                try take(m, open: open, reader: reader)
            }
        }
    }

    /// One inbound message: whose, for which open alarm, and what it means.
    func take(_ m: TwilioMessage, open: [OpenIncident], reader: ReplyReader) throws {
        guard let sent = m.dateSent else { return }
        let from = Self.digits(m.from)
        // The open alarms this sender is a contact of, newest told first.
        let candidates = open.compactMap { i -> (OpenIncident, Recipient, Double?)? in
            guard let c = i.contacts.first(where: { $0.phone.map(Self.digits) == from }) else { return nil }
            return (i, c, c.phone.flatMap { i.toldAt[$0] })
        }.sorted { ($0.2 ?? 0) > ($1.2 ?? 0) }
        guard let (incident, contact, _) = candidates.first(where: { ($0.2).map { Self.counts(sent, after: $0) } ?? false })
                ?? candidates.first else {
            if try outbox.storeReply(sid: m.sid, incident: nil, contact: nil, from: m.from, body: m.body, sentAt: sent,
                                     meaning: "unknown-sender") {
                logger.notice("an SMS from a number that is no contact of an open alarm: ignored")
            }
            return
        }
        // Sent before this alarm reached the contact: a reply to something earlier.
        let told = contact.phone.flatMap { incident.toldAt[$0] }
        let meaning = told.map { Self.counts(sent, after: $0) } ?? false
            ? reader.read(m.body, for: incident.incident).rawValue : "too-early"
        guard try outbox.storeReply(sid: m.sid, incident: incident.incident, contact: contact.name, from: m.from, body: m.body,
                                    sentAt: sent, meaning: meaning) else { return }
        let meta: Logger.Metadata = ["incident": "\(incident.incident)", "contact": "\(contact.name)"]
        if meaning == ReplyReader.Meaning.acknowledges.rawValue {
            logger.notice("\(contact.name) acknowledged by SMS reply", metadata: meta)
            let ack = Acknowledgement(incident: incident.incident, by: contact.name, via: "SMS reply")
            try outbox.acknowledge(incident: ack.incident, by: ack.byAndVia)
            inbox.receive(incident: ack.incident, contact: ack.by, via: "SMS reply")
        } else {
            logger.notice("SMS reply from \(contact.name) kept with the incident (\(meaning)): \(m.body.prefix(160))", metadata: meta)
            outbox.progressFeed.yield(.reply(incident: incident.incident, contact: contact.name, body: m.body))
        }
    }

    // MARK: HTTP

    private func get<T: Decodable>(_ url: String, account: TwilioAccount) async throws -> T {
        let answer = try await HTTPDelivery.send(account.request(url, method: .GET), client: client, timeout: account.timeout)
        try HTTPDelivery.check(answer, url: url)
        return try JSONDecoder().decode(T.self, from: Data(answer.body.utf8))
    }

    /// A phone number's digits (and a leading +): `+44 7700 900123` and `+447700900123` match.
    static func digits(_ phone: String) -> String {
        String(phone.filter { $0.isNumber || $0 == "+" })
    }
}
