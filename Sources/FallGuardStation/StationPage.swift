import FallGuardFieldTest
import Foundation

/// The station's page: a shell that its script fills from `/site.json` every second (open
/// alarms first, with the time since each was raised, who was told and who answered; then
/// every bridge) and from `/incidents.json` every 5 s (the incidents of the last days across
/// the site, newest first, with the time to acknowledgement), a sound while an alarm is open
/// that nobody has taken, and an acknowledge button per open alarm that posts `/ack` with the
/// session's form token. Pure text.
public enum StationPage {
    /// Served for every HTML answer (the bridge page's rules: no inline script, no framing).
    public static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'"),
        ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY"),
        ("Cache-Control", "no-store"),
    ]

    static let style = """
        body{font-family:system-ui,sans-serif;margin:1rem;color:#222}table{border-collapse:collapse;width:100%}
        td,th{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
        .alarm{background:#fde2e1}.alarm td{font-weight:600}.off{color:#999}.warn{color:#a40}
        button.ack{font-size:1.1rem;padding:.4rem .8rem;background:#c00;color:#fff;border:0;border-radius:.3rem}
        #banner{padding:.5rem;margin:.5rem 0;background:#c00;color:#fff;font-size:1.3rem;display:none}
        .muted{color:#777}header{display:flex;gap:1rem;align-items:center;justify-content:space-between}
        """

    /// Text made safe for HTML (the field-test report's and the bridge page's escaping).
    public static func escaped(_ s: String) -> String { htmlEscaped(s) }

    public static func login(message: String?) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
        <link rel="icon" href="data:,"><title>FallGuard station: sign in</title><style>\(style)</style></head><body>
        <h1>FallGuard station</h1>\(message.map { "<p class=\"warn\" id=\"login-error\">\(escaped($0))</p>" } ?? "")
        <form method="post" action="/login"><p><label>User <input name="user" id="user" autocomplete="username" required></label></p>
        <p><label>Password <input name="password" id="password" type="password" autocomplete="current-password" required></label></p>
        <p><button id="sign-in">Sign in</button></p></form></body></html>
        """
    }

    public static func main(member: String, formToken: String) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
        <link rel="icon" href="data:,"><title>FallGuard station</title><style>\(style)</style></head><body data-csrf="\(escaped(formToken))">
        <header><h1>FallGuard station</h1><div>Signed in as <b id="me">\(escaped(member))</b>
        <button id="sound-on" type="button">Sound on</button>
        <form method="post" action="/logout" style="display:inline"><input type="hidden" name="csrf" value="\(escaped(formToken))"><button>Sign out</button></form></div></header>
        <div id="banner" data-sounding="0"></div>
        <h2>Open alarms</h2><table><thead><tr><th>Bridge</th><th>Wearer</th><th>Location</th><th>Alarm</th><th>Raised</th><th>Told</th><th>Answered</th><th></th></tr></thead>
        <tbody id="alarms"><tr><td colspan="8" class="muted">Loading…</td></tr></tbody></table>
        <h2>Every bridge <span id="count" class="muted"></span></h2><table><thead><tr><th>Bridge</th><th>Wearer</th><th>Location</th><th>Connection</th><th>State</th><th>Device (sensor, worn)</th><th>Last heartbeat</th><th>Last message</th><th>Last incident</th></tr></thead>
        <tbody id="bridges"></tbody></table>
        <h2 id="past-title">Past incidents</h2><p id="past-problem" class="warn"></p><table><thead><tr><th>Raised</th><th>Bridge</th><th>Wearer</th><th>Location</th><th>Alarm</th><th>Told</th><th>Answered by</th><th>To answer</th><th>Outcome</th><th>Ended</th></tr></thead>
        <tbody id="past"></tbody></table>
        <p id="connection" class="muted"></p>
        <script src="/station.js"></script></body></html>
        """
    }

    /// The page's script: polls `/site.json`, renders, beeps, acknowledges.
    public static let script = #"""
        "use strict";
        const csrf = document.body.dataset.csrf;
        let audio = null, sent = {};
        window.station = {beeps: 0, renders: 0};
        function ago(now, t) {
          if (t == null) return "–";
          const s = Math.max(0, Math.round(now - t));
          return s < 60 ? s + " s ago" : s < 3600 ? Math.floor(s / 60) + " min " + (s % 60) + " s ago" : Math.floor(s / 3600) + " h " + Math.floor(s % 3600 / 60) + " min ago";
        }
        function cell(row, text, cls) { const td = row.insertCell(); td.textContent = text == null ? "–" : text; if (cls) td.className = cls; return td; }
        function told(i) { if (!i) return "–"; const parts = []; if (i.delivered) parts.push("message delivered"); if (i.reachedBy) parts.push(i.reachedBy + " answered the call"); return parts.length ? parts.join("; ") : "not yet"; }
        function beep() {
          window.station.beeps++;
          try {
            audio = audio || new (window.AudioContext || window.webkitAudioContext)();
            const o = audio.createOscillator(), g = audio.createGain();
            o.frequency.value = 880; g.gain.value = 0.2; o.connect(g); g.connect(audio.destination);
            o.start(); o.stop(audio.currentTime + 0.35);
          } catch (e) {}
        }
        async function acknowledge(device, incident, button) {
          button.disabled = true; button.textContent = "Sending…";
          const body = new URLSearchParams({csrf, device, incident});
          const r = await fetch("/ack", {method: "POST", body, credentials: "same-origin"});
          button.textContent = r.ok ? "Sent, waiting for the bridge" : "Failed: " + r.status;
          if (r.ok) sent[device + "/" + incident] = true; else button.disabled = false;
        }
        function render(site) {
          const open = site.bridges.filter(b => b.alarmOpen);
          const alarms = document.getElementById("alarms");
          alarms.replaceChildren();
          for (const b of open) {
            const row = alarms.insertRow(); row.className = "alarm"; row.dataset.device = b.device;
            cell(row, b.device); cell(row, b.wearer); cell(row, b.location);
            cell(row, (b.state === "countdown" ? "countdown: " : "") + (b.incident ? b.incident.kind + " " + b.incident.id : "alarm"));
            cell(row, ago(site.now, b.alarmSince), "since"); cell(row, told(b.incident));
            cell(row, b.incident && b.incident.acknowledgedBy || "nobody yet", "answered");
            const td = row.insertCell();
            if (b.incident && b.state === "alert-out") {
              const key = b.device + "/" + b.incident.id;
              const button = document.createElement("button");
              button.className = "ack"; button.dataset.ack = b.device;
              button.textContent = sent[key] ? "Sent, waiting for the bridge" : "I'm going: acknowledge as " + site.me;
              button.disabled = !!sent[key];
              button.addEventListener("click", () => acknowledge(b.device, b.incident.id, button));
              td.appendChild(button);
            }
          }
          if (!open.length) { const r = alarms.insertRow(); cell(r, "No open alarm.", "muted").colSpan = 8; }
          const banner = document.getElementById("banner");
          const untaken = open.filter(b => !(b.incident && sent[b.device + "/" + b.incident.id]));
          banner.style.display = untaken.length ? "block" : "none";
          banner.dataset.sounding = untaken.length ? "1" : "0";
          banner.textContent = untaken.length ? "ALARM: " + untaken.map(b => b.device + (b.wearer ? " (" + b.wearer + ")" : "")).join(", ") : "";
          if (untaken.length) beep();
          const list = document.getElementById("bridges");
          list.replaceChildren();
          for (const b of site.bridges) {
            const row = list.insertRow(); row.dataset.device = b.device;
            if (b.alarmOpen) row.className = "alarm"; else if (b.online === false) row.className = "off";
            cell(row, b.device); cell(row, b.wearer); cell(row, b.location);
            cell(row, b.online == null ? "unknown" : b.online ? "online" : "OFFLINE", "online");
            cell(row, b.state, "state");
            cell(row, b.worn === false ? "NOT WORN" + (b.sensorProblem ? "; " + b.sensorProblem : "") : b.sensorProblem || "ok",
                 b.worn === false || b.sensorProblem ? "warn" : "");
            cell(row, ago(site.now, b.lastHeartbeat)); cell(row, ago(site.now, b.lastSeen));
            cell(row, b.incident ? b.incident.id + " " + b.incident.kind + (b.incident.acknowledgedBy ? ", answered by " + b.incident.acknowledgedBy : "") : "–", "incident");
          }
          window.station.renders++;
          document.getElementById("count").textContent = "(" + site.bridges.length + ", " + site.bridges.filter(b => b.online === false).length + " offline)";
        }
        async function poll() {
          try {
            const r = await fetch("/site.json", {credentials: "same-origin", cache: "no-store"});
            if (r.status === 401) { location.href = "/login"; return; }
            const site = await r.json();
            render(site);
            document.getElementById("connection").textContent = site.broker;
          } catch (e) {
            document.getElementById("connection").textContent = "The station does not answer: " + e;
          }
          setTimeout(poll, 1000);
        }
        function when(t) { return t == null ? "–" : new Date(t * 1000).toLocaleString(); }
        function span(s) { return s == null ? "–" : s < 60 ? Math.round(s) + " s" : Math.floor(s / 60) + " min " + Math.round(s % 60) + " s"; }
        function renderPast(h) {
          document.getElementById("past-title").textContent = "Incidents of the last " + h.days + " days (" + h.incidents.length + ")";
          document.getElementById("past-problem").textContent = h.problem ? "Not kept across a restart: " + h.problem : "";
          const list = document.getElementById("past");
          list.replaceChildren();
          for (const i of h.incidents) {
            const row = list.insertRow(); row.dataset.device = i.device; row.dataset.incident = i.incident || "";
            if (i.outcome === "open") row.className = "alarm";
            cell(row, when(i.raisedAt)); cell(row, i.device); cell(row, i.wearer); cell(row, i.location);
            cell(row, (i.kind || (i.incident ? "alarm" : "countdown")) + (i.incident ? " " + i.incident : ""));
            cell(row, told(i)); cell(row, i.acknowledgedBy, "answered"); cell(row, span(i.secondsToAcknowledge), "to-answer");
            cell(row, i.outcome, "outcome"); cell(row, when(i.endedAt));
          }
          if (!h.incidents.length) { const r = list.insertRow(); cell(r, "No incident in these days.", "muted").colSpan = 10; }
          window.station.pastRenders = (window.station.pastRenders || 0) + 1;
        }
        async function pollPast() {
          try {
            const r = await fetch("/incidents.json", {credentials: "same-origin", cache: "no-store"});
            if (r.ok) renderPast(await r.json());
          } catch (e) {}
          setTimeout(pollPast, 5000);
        }
        document.getElementById("sound-on").addEventListener("click", () => { beep(); });
        poll();
        pollPast();
        """#

    /// What `/site.json` sends.
    public struct Site: Encodable {
        public var now: Double
        public var me: String
        public var broker: String
        public var bridges: [Bridge]
    }

    public struct Bridge: Encodable {
        var device: String
        var wearer: String?
        var location: String?
        var online: Bool?
        var state: String?
        var lastSeen: Double?
        var lastHeartbeat: Double?
        var sensorProblem: String?
        var worn: Bool?
        var alarmOpen: Bool
        var alarmSince: Double?
        var incident: SiteModel.Incident?
    }

    /// What `/incidents.json` sends: the past incidents, newest first.
    public struct History: Encodable {
        public var now: Double
        public var days: Int
        /// Why they are not kept in the file now (nil: they are).
        public var problem: String?
        public var incidents: [PastIncident]
    }

    public struct PastIncident: Encodable {
        var key, device: String
        var incident, kind, wearer, location: String?
        var raisedAt: Double
        var delivered: Bool
        var reachedBy, acknowledgedBy: String?
        var acknowledgedAt, secondsToAcknowledge, endedAt: Double?
        var outcome: String
    }

    public static func incidentsJSON(_ records: [PastIncidents.Record], days: Int, now: Double, problem: String?) -> String {
        let history = History(now: now, days: days, problem: problem, incidents: records.map { r in
            PastIncident(key: r.key, device: r.device, incident: r.incident, kind: r.kind, wearer: r.wearer, location: r.location,
                         raisedAt: r.raisedAt, delivered: r.delivered, reachedBy: r.reachedBy, acknowledgedBy: r.acknowledgedBy,
                         acknowledgedAt: r.acknowledgedAt, secondsToAcknowledge: r.secondsToAcknowledge, endedAt: r.endedAt, outcome: r.outcome)
        })
        let e = JSONEncoder()
        e.outputFormatting = [.withoutEscapingSlashes]
        return (try? String(decoding: e.encode(history), as: UTF8.self)) ?? "{}"
    }

    public static func json(_ model: SiteModel, me: String, broker: String, now: Double) -> String {
        let site = Site(now: now, me: me, broker: broker, bridges: model.ordered.map { b in
            Bridge(device: b.device, wearer: b.wearer, location: b.location, online: b.online, state: b.state, lastSeen: b.lastSeen,
                   lastHeartbeat: b.lastHeartbeat, sensorProblem: b.sensorProblem, worn: b.worn, alarmOpen: b.alarmOpen, alarmSince: b.alarmSince,
                   incident: b.incident)
        })
        let e = JSONEncoder()
        e.outputFormatting = [.withoutEscapingSlashes]
        return (try? String(decoding: e.encode(site), as: UTF8.self)) ?? "{}"
    }
}
