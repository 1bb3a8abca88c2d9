import FallGuardCore
import Foundation
import Logging

/// The caregiver loop through a modem (``ModemChannel``), as ``CaregiverFollowUp`` does it
/// through Twilio's API: each call a modem dialled followed to its end (answered: reached;
/// refused or busy, or ringing past `ring-timeout`: not reached, and the outbox escalates at
/// once), and the SMS the modem received read while an alarm is open (the same
/// ``ReplyReader`` and sender check as Twilio replies).
extension CaregiverFollowUp {
    /// What the modems have to follow now: their call channels (and those that fall back to
    /// them) and their SMS channels that read replies; nil interval when there is nothing.
    struct ModemWork {
        var calls: [String: ModemOptions] = [:]
        var replies: [ModemOptions] = []
        var interval: Double?
    }

    func modemWork() -> ModemWork {
        let channels = outbox.settings.channels
        var work = ModemWork()
        for (name, options) in channels {
            if let modem = options as? ModemOptions {
                if modem.mode == .call { work.calls[name] = modem }
                if modem.mode == .sms, modem.readReplies, !work.replies.contains(where: { $0.manager == modem.manager }) {
                    work.replies.append(modem)
                }
            } else if let routed = options as? any FallbackChannelOptions, let fallback = routed.fallback,
                      let modem = channels[fallback] as? ModemOptions, modem.mode == .call {
                work.calls[name] = modem
            }
        }
        let intervals = work.calls.values.map(\.pollInterval) + work.replies.map(\.pollInterval)
        work.interval = intervals.min()
        return work
    }

    func followModem(_ work: ModemWork) async throws {
        if !work.calls.isEmpty { try await followModemCalls(work.calls) }
        if !work.replies.isEmpty { try await readModemReplies(work.replies) }
    }

    /// Reads each call a modem dialled whose end is not known yet.
    func followModemCalls(_ channels: [String: ModemOptions]) async throws {
        let t = outbox.now()
        for call in try outbox.callsToFollow(channels: Set(channels.keys), window: Self.window, modem: true) {
            guard let options = channels[call.channel] else { continue }
            let path = String(call.sid.dropFirst(ModemChannel.providerPrefix.count))
            let seen = modemCalls.withLock { calls in
                if calls[path] == nil { calls[path] = (t, nil) }
                return calls[path]!
            }
            let outcome: CallOutcome?
            switch try await options.manager.callState(path) {
            case nil: outcome = .notReached("gone from ModemManager")
            case ("active", _)?:
                outcome = .reached
                // Nothing to say on the line (no voice on most modems): hang up after a while.
                let manager = options.manager, wait = options.answeredFor
                Task {
                    try? await Task.sleep(for: .milliseconds(Int(wait * 1000)))
                    await manager.hangUp(path)
                }
            case let ("terminated", reason)?:
                outcome = .notReached(reason == "refused-or-busy" ? "busy" : "no-answer")
            default:
                if t - seen.seen > options.ringTimeout {
                    await options.manager.hangUp(path)
                    outcome = .notReached("no-answer")
                } else {
                    outcome = nil
                }
            }
            if let outcome {
                modemCalls.withLock { $0[path] = nil }
                try outbox.record(outcome, of: call)
            }
        }
    }

    /// Reads the SMS each modem received and takes each new one once, as a Twilio reply, then
    /// deletes it from the modem (a SIM holds a few dozen).
    ///
    /// The SMS already on a modem when an alarm is first seen open are not replies to it, even
    /// when their network time stamp is later than the alarm by the bridge's clock (a Pi
    /// without a real-time clock and without NTP runs behind after a power cut): an "OK"
    /// kept on the SIM from last week must never acknowledge tonight's fall. They are deleted
    /// unread. (A person cannot read and answer within the first poll, `poll-interval` s.)
    func readModemReplies(_ modems: [ModemOptions]) async throws {
        let open = try outbox.openIncidents(window: Self.window)
        guard !open.isEmpty else {
            modemBaseline.withLock { $0 = nil }
            return
        }
        let baseline = modemBaseline.withLock { $0 }
        var found = Set<String>()
        for modem in modems {
            let reader = ReplyReader(words: modem.acknowledgeWords)
            var read: [String] = []
            for sms in try await modem.manager.receivedSMS() {
                // ModemManager numbers its SMS afresh when it restarts: the time stamp tells them apart.
                let sid = "\(ModemChannel.providerPrefix)\(sms.path)@\(sms.timestamp)"
                found.insert(sid)
                guard let baseline else {
                    logger.info("an SMS on the modem from before the alarm (\(sms.timestamp)): not a reply to it, deleted")
                    read.append(sms.path)
                    continue
                }
                guard !baseline.contains(sid) else { continue }
                let message = TwilioMessage(sid: sid, from: sms.from, to: "", body: sms.text, direction: "inbound", dateSent: sms.sentAt)
                try take(message, open: open, reader: reader)
                read.append(sms.path)
            }
            await modem.manager.deleteSMS(read)
        }
        if baseline == nil { modemBaseline.withLock { $0 = found } }
    }
}
