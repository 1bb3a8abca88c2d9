import FallGuardCore
import FallGuardFieldTest
import Foundation

/// The station's page: a shell that its script fills from `/site.json` every second (open
/// alarms first, with the time since each was raised, who was told and who answered; then
/// every bridge) and from `/incidents.json` every 5 s (the incidents of the last days across
/// the site, newest first, with the time to acknowledgement), a sound while an alarm is open
/// that nobody has taken, and an acknowledge button per open alarm that posts `/ack` with the
/// session's form token. Above them, fault calls in a banner and a tone of their own (a lost
/// link to the broker, the station not answering, a bridge offline, not worn or with a sensor
/// fault), and the station's link to the broker. Pure text.
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
        .alarm{background:#fde2e1}.alarm td{font-weight:600}.warn{color:#a40}
        button.ack{font-size:1.1rem;padding:.4rem .8rem;background:#c00;color:#fff;border:0;border-radius:.3rem}
        #banner{padding:.5rem;margin:.5rem 0;background:#c00;color:#fff;font-size:1.3rem;display:none}
        #fault{padding:.5rem;margin:.5rem 0;background:#ffc400;color:#000;border:3px solid #000;font-size:1.2rem;font-weight:700;display:none}
        .fault{background:#fff1c2}.fault td{font-weight:600}.stale td.online{font-style:italic;color:#a40}
        button.ack.late{background:#000;color:#ffc400}
        #pin-dialog{padding:.5rem;margin:.5rem 0;border:3px solid #c00;font-size:1.2rem}#pin{font-size:1.3rem}
        #sound[data-state=off]{background:#ffc400;font-weight:700}td{overflow-wrap:anywhere}
        @media (max-width:640px){body{margin:.4rem}header{flex-wrap:wrap;gap:.3rem}h1{font-size:1.3rem}
        table,tbody,tr,td{display:block;width:auto}thead{display:none}tr{border-bottom:2px solid #bbb;padding:.3rem 0}
        td{border:0;padding:.1rem .3rem}td:empty{display:none}button.ack{width:100%;font-size:1.2rem;padding:.6rem}}
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

    /// The page for a member of staff, or (`member` nil) for a display: no personal session,
    /// every acknowledgement asks for a member's PIN.
    public static func main(member: String?, formToken: String) -> String {
        let who = member.map { "Signed in as <b id=\"me\">\(escaped($0))</b>" }
            ?? "<b id=\"me\" data-display=\"1\">Display</b> (acknowledge with your PIN)"
        return """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
        <link rel="icon" href="data:,"><title>FallGuard station</title><style>\(style)</style></head><body data-csrf="\(escaped(formToken))" data-display="\(member == nil ? "1" : "0")">
        <header><h1>FallGuard station</h1><div>\(who)
        <button id="sound" type="button" data-state="off">Sound: not yet known</button>
        <form method="post" action="/logout" style="display:inline"><input type="hidden" name="csrf" value="\(escaped(formToken))"><button>\(member == nil ? "Close display" : "Sign out")</button></form></div></header>
        <p id="link" class="warn" data-connected="0">Not yet known whether the station sees the broker.</p>
        <p id="floors" hidden><label>Floor: <select id="floor"><option value="">every floor</option></select></label> <span id="shift" class="muted"></span>
        <span class="muted">(open alarms and faults of every floor are always shown)</span></p>
        <div id="pin-dialog" style="display:none"><label>PIN: <span id="pin-what">acknowledge</span> <b id="pin-for"></b> in your name
        <input id="pin" type="password" inputmode="numeric" autocomplete="off" maxlength="8" size="8"></label>
        <button id="pin-ok" type="button" class="ack">OK</button> <button id="pin-cancel" type="button">Cancel</button> <span id="pin-error" class="warn"></span></div>
        <div id="fault" data-sounding="0" data-faults="" role="alert"></div>
        <div id="banner" data-sounding="0" role="alert"></div>
        <h2>Open alarms</h2><table><thead><tr><th>Bridge</th><th>Wearer</th><th>Location</th><th>Alarm</th><th>Raised</th><th>Told</th><th>Answered</th><th></th></tr></thead>
        <tbody id="alarms"><tr><td colspan="8" class="muted">Loading…</td></tr></tbody></table>
        <h2>Calls in progress</h2><p class="muted">Accepted → I'm here (at the bedside) → reset. Late steps escalate.</p>
        <table><thead><tr><th>Bridge</th><th>Wearer</th><th>Location</th><th>Alarm</th><th>Accepted</th><th>Present</th><th></th></tr></thead>
        <tbody id="calls"></tbody></table>
        <h2>Every bridge <span id="count" class="muted"></span></h2><table><thead><tr><th>Bridge</th><th>Wearer</th><th>Location</th><th>Connection</th><th>State</th><th>Device (sensor, worn)</th><th>Last heartbeat</th><th>Last message</th><th>Last incident</th></tr></thead>
        <tbody id="bridges"></tbody></table>
        <h2><span id="past-title">Past incidents</span> <a href="/incidents.csv" id="csv" download>CSV</a></h2><p id="past-problem" class="warn"></p><table><thead><tr><th>Raised</th><th>Bridge</th><th>Wearer</th><th>Location</th><th>Alarm</th><th>Told</th><th>Answered by</th><th>To answer</th><th>Outcome</th><th>Ended</th></tr></thead>
        <tbody id="past"></tbody></table>
        <p id="connection" class="muted"></p>
        <script src="/station.js"></script></body></html>
        """
    }

    /// The page's script: polls `/site.json`, renders, beeps, acknowledges; says when it cannot
    /// see (the station's link to the broker, the station itself not answering, each bridge's
    /// faults) with a banner and a tone of their own.
    public static let script = #"""
        "use strict";
        const csrf = document.body.dataset.csrf, display = document.body.dataset.display === "1";
        let audio = null, sent = {}, failed = {}, lastSite = null, lastOk = Date.now(), lastError = null, signedOut = false;
        let heard = new Set(), lastFaultTone = 0, silenced = new Map(), pinAction = null, pinLabel = null;
        window.station = {beeps: 0, loudBeeps: 0, faultBeeps: 0, renders: 0, sound: "none"};
        function ago(now, t) {
          if (t == null) return "–";
          const s = Math.max(0, Math.round(now - t));
          return s < 60 ? s + " s ago" : s < 3600 ? Math.floor(s / 60) + " min " + (s % 60) + " s ago" : Math.floor(s / 3600) + " h " + Math.floor(s % 3600 / 60) + " min ago";
        }
        function clock(t) { return t == null ? "–" : new Date(t * 1000).toLocaleTimeString(); }
        function cell(row, text, cls) { const td = row.insertCell(); td.textContent = text == null ? "–" : text; if (cls) td.className = cls; return td; }
        function told(i) { if (!i) return "–"; const parts = []; if (i.delivered) parts.push("message delivered"); if (i.reachedBy) parts.push(i.reachedBy + " answered the call"); return parts.length ? parts.join("; ") : "not yet"; }
        // Sound: one audio context for the page's life (a station restart does not reload the
        // page, so sound stays on); a browser without a click on the page yet keeps it
        // suspended, which the page says (a kiosk runs chromium with
        // --autoplay-policy=no-user-gesture-required and has sound at once).
        function soundOn() {
          try { audio = audio || new (window.AudioContext || window.webkitAudioContext)(); if (audio.state !== "running") audio.resume(); } catch (e) {}
          showSound();
        }
        function showSound() {
          const state = audio ? audio.state : "none", on = state === "running", b = document.getElementById("sound");
          window.station.sound = state;
          b.dataset.state = on ? "on" : "off";
          b.textContent = on ? "Sound on: test" : "SOUND OFF: turn on";
        }
        function tone(freqs, type, gain, length) {
          try {
            if (!audio) soundOn();
            let t = audio.currentTime;
            for (const f of freqs) {
              const o = audio.createOscillator(), g = audio.createGain();
              o.type = type; o.frequency.value = f; g.gain.value = gain; o.connect(g); g.connect(audio.destination);
              o.start(t); o.stop(t + length); t += length + 0.05;
            }
          } catch (e) {}
        }
        // A fall: one high beep every second. A fault call: a low falling pair, at once for a new
        // fault, then every 10 s while any lasts.
        function beep() { window.station.beeps++; tone([880], "sine", 0.2, 0.35); }
        // Escalated (nobody accepted in time, or nobody at the bedside): louder, two high notes.
        function loudBeep() { window.station.beeps++; window.station.loudBeeps++; tone([1047, 1397], "square", 0.5, 0.2); }
        function faultTone() { window.station.faultBeeps++; lastFaultTone = Date.now(); tone([520, 390], "square", 0.08, 0.25); }
        // Each fault rings at once, then every 10 s until it is silenced on this page (the
        // banner's button); a silenced one stays in the banner and rings again every 10 min, and
        // one that clears and comes back is new.
        const faultRepeat = 10000, silencedRepeat = 600000;
        // An alarm is its bridge, its incident and when it opened: a second fall is a new one.
        function alarmKey(b) { return b.device + "/" + (b.incident ? b.incident.id : "") + "/" + b.alarmSince; }
        function notLanded(b, timeout) { const at = sent[alarmKey(b)]; return at != null && Date.now() - at > timeout; }
        async function acknowledge(b, button, pin) {
          const key = alarmKey(b);
          button.disabled = true; button.textContent = "Sending…";
          try {
            const fields = {csrf, device: b.device, incident: b.incident.id};
            if (pin != null) fields.pin = pin;
            const r = await fetch("/ack", {method: "POST", body: new URLSearchParams(fields), credentials: "same-origin"});
            if (r.ok) { sent[key] = Date.now(); delete failed[key]; button.textContent = "Sent, waiting for the bridge"; return true; }
            failed[key] = "Failed (" + r.status + (r.status === 403 && pin != null ? ": wrong PIN" : "") + "): send again";
          } catch (e) { failed[key] = "Failed (" + e + "): send again"; }
          button.textContent = failed[key]; button.disabled = false;
          return false;
        }
        // On a display: the PIN of whoever goes, in a box of its own (the tables are redrawn every
        // second). `action(pin, button)` answers true when done, else the error to show.
        function askPIN(what, b, action) {
          pinAction = action;
          document.getElementById("pin-what").textContent = what;
          document.getElementById("pin-for").textContent = b.device + (b.wearer ? " (" + b.wearer + ")" : "");
          document.getElementById("pin-error").textContent = "";
          document.getElementById("pin-dialog").style.display = "block";
          const input = document.getElementById("pin"); input.value = ""; input.focus();
        }
        function closePIN() { pinAction = null; document.getElementById("pin").value = ""; document.getElementById("pin-dialog").style.display = "none"; }
        async function sendPIN() {
          if (!pinAction) return;
          const ok = document.getElementById("pin-ok"), input = document.getElementById("pin");
          const done = await pinAction(input.value, ok);
          ok.textContent = "OK"; ok.disabled = false;
          if (done === true) { closePIN(); if (lastSite) render(lastSite); }
          else document.getElementById("pin-error").textContent = done || "Not sent";
        }
        document.getElementById("pin-ok").addEventListener("click", sendPIN);
        document.getElementById("pin").addEventListener("keydown", e => { if (e.key === "Enter") sendPIN(); });
        document.getElementById("pin-cancel").addEventListener("click", closePIN);
        // A step of an accepted call (presence, reset), in the member's name or by PIN on a display.
        async function step(c, which, button, pin) {
          button.disabled = true;
          try {
            const fields = {csrf, key: c.key, step: which};
            if (pin != null) fields.pin = pin;
            const r = await fetch("/step", {method: "POST", body: new URLSearchParams(fields), credentials: "same-origin"});
            if (r.ok) { if (lastSite) poll(true); return true; }
            const text = (await r.text()).trim();
            button.disabled = false;
            return "Failed (" + r.status + "): " + text;
          } catch (e) { button.disabled = false; return "Failed: " + e; }
        }
        function renderCalls(site) {
          const list = document.getElementById("calls");
          list.replaceChildren();
          for (const c of site.calls) {
            const row = list.insertRow(); row.dataset.device = c.device; row.dataset.key = c.key;
            row.className = c.late ? "alarm" : "";
            cell(row, c.device); cell(row, c.wearer); cell(row, c.location);
            cell(row, (c.kind || "alarm") + " " + (c.incident || ""));
            cell(row, c.acceptedBy + ", " + ago(site.now, c.acceptedAt), "accepted");
            cell(row, c.presentBy ? c.presentBy + ", " + ago(site.now, c.presentAt)
                                  : (c.late ? "NOBODY THERE YET (due " + clock(c.presenceDue) + ")" + (c.escalated ? ": escalated" : "") : "due " + clock(c.presenceDue)), "present");
            const td = row.insertCell(), which = c.presentBy ? "reset" : "presence";
            const button = document.createElement("button");
            button.className = "ack step"; button.dataset.step = which; button.dataset.key = c.key;
            button.textContent = which === "presence" ? "I'm here" : "Reset (done)";
            button.addEventListener("click", async () => {
              if (display) askPIN(which === "presence" ? "I'm here at" : "reset", c, (pin, ok) => step(c, which, ok, pin));
              else { const r = await step(c, which, button); if (r !== true) button.textContent = r; }
            });
            td.appendChild(button);
          }
          if (!site.calls.length) { const r = list.insertRow(); cell(r, "No call in progress.", "muted").colSpan = 7; }
        }
        function raised(site, b) {
          if (b.raisedAt == null) return ago(site.now, b.alarmSince) + (b.state === "countdown" ? " (countdown, seen here)" : " (seen here)");
          let text = ago(site.now, b.raisedAt) + " (" + clock(b.raisedAt) + " by the bridge";
          if (b.raisedSeenAt != null && Math.abs(b.raisedSeenAt - b.raisedAt) > 3) text += "; seen here " + clock(b.raisedSeenAt);
          return text + ")";
        }
        function incidentText(i) {
          if (!i) return "–";
          let text = i.id + " " + i.kind + (i.acknowledgedBy ? ", answered by " + i.acknowledgedBy : "");
          if (i.atTime != null) text += ", " + clock(i.atTime) + (i.receivedAt != null && Math.abs(i.receivedAt - i.atTime) > 3 ? " (seen here " + clock(i.receivedAt) + ")" : "");
          return text;
        }
        // Fault calls: the station not answering, its link to the broker lost, each bridge's faults.
        function showFaults() {
          const lines = [], keys = [], site = lastSite;
          const silent = (Date.now() - lastOk) / 1000;
          if (signedOut) {
            lines.push(display ? "THIS DISPLAY IS SIGNED OUT: it no longer shows alarms. Open its address with the display key again."
                               : "SIGNED OUT: this page no longer shows alarms. Sign in again (the link below).");
            keys.push("session");
          } else if (silent > 3) {
            lines.push("THE STATION DOES NOT ANSWER for " + Math.round(silent) + " s" + (lastError ? " (" + lastError + ")" : "") +
                       ": nothing on this page is current. Alarms may be missed.");
            keys.push("station");
          }
          if (site && !site.link.connected) {
            lines.push("CANNOT SEE THE BRIDGES: the station lost the broker " + site.link.broker + " " + ago(site.now, site.link.since) +
                       " (" + clock(site.link.since) + ")" + (site.link.problem ? ": " + site.link.problem.replace(/\.$/, "") : "") +
                       ". Alarms may be missed; what is shown is as of then.");
            keys.push("link");
          }
          for (const b of site ? site.bridges : []) {
            if (!b.faults.length) continue;
            lines.push("FAULT: " + b.device + (b.wearer ? " (" + b.wearer + ")" : "") + (b.location ? ", " + b.location : "") + ": " +
                       b.faults.join(", ") + (b.stale ? " (as last known)" : ""));
            for (const f of b.faults) keys.push(b.device + ":" + f.split(":")[0].replace(/ /g, "-"));
          }
          const banner = document.getElementById("fault"), now = Date.now();
          for (const k of [...silenced.keys()]) if (!keys.includes(k)) silenced.delete(k);
          const loud = keys.filter(k => !silenced.has(k));
          const nodes = lines.map(l => { const d = document.createElement("div"); d.textContent = l; return d; });
          if (signedOut) { const a = document.createElement("a"); a.href = "/login"; a.id = "sign-in-again"; a.textContent = "Sign in again"; nodes.push(a); }
          if (loud.length) {
            const b = document.createElement("button"); b.type = "button"; b.id = "fault-silence"; b.textContent = "Silence the fault tone";
            b.addEventListener("click", () => { for (const k of keys) silenced.set(k, Date.now()); showFaults(); });
            nodes.push(b);
          } else if (keys.length) {
            const d = document.createElement("div"); d.className = "muted"; d.textContent = "Fault tone silenced on this page: it rings again every 10 min, and at once for a new fault.";
            nodes.push(d);
          }
          if (audio && audio.state !== "running" || !audio) {
            const d = document.createElement("div"); d.id = "sound-off";
            d.textContent = "SOUND IS OFF on this screen: alarms are not heard. Click anywhere or press a key to turn it on.";
            nodes.unshift(d);
          }
          banner.replaceChildren(...nodes);
          banner.style.display = nodes.length ? "block" : "none";
          banner.dataset.sounding = loud.length ? "1" : "0";
          banner.dataset.faults = keys.join(" ");
          banner.dataset.silenced = keys.filter(k => silenced.has(k)).join(" ");
          const fresh = keys.some(k => !heard.has(k));
          heard = new Set(keys);
          let remind = false;
          for (const [k, at] of silenced) if (now - at >= silencedRepeat) { silenced.set(k, now); remind = true; }
          if (fresh || remind || loud.length && now - lastFaultTone >= faultRepeat) faultTone();
          showSound();
        }
        function render(site) {
          lastSite = site;
          const timeout = (site.acknowledgementTimeout || 10) * 1000;
          const open = site.bridges.filter(b => b.alarmOpen);
          const alarms = document.getElementById("alarms");
          alarms.replaceChildren();
          for (const b of open) {
            const row = alarms.insertRow(); row.className = "alarm"; row.dataset.device = b.device;
            cell(row, b.device); cell(row, b.wearer); cell(row, b.location);
            cell(row, (b.state === "countdown" ? "countdown" + (b.incident ? ": " : "") : "") + (b.incident ? b.incident.kind + " " + b.incident.id : b.state === "countdown" ? "" : "alarm"));
            cell(row, raised(site, b), "since"); cell(row, told(b.incident));
            cell(row, b.incident && b.incident.acknowledgedBy || "nobody yet", "answered");
            const td = row.insertCell();
            if (b.incident && b.state === "alert-out") {
              const key = alarmKey(b), at = sent[key], late = notLanded(b, timeout);
              const button = document.createElement("button");
              button.className = "ack" + (late ? " late" : ""); button.dataset.ack = b.device;
              button.dataset.state = at == null ? "new" : late ? "not-landed" : "sent";
              button.textContent = at == null ? failed[key] || (display ? "I'm going: acknowledge with my PIN" : "I'm going: acknowledge as " + site.me)
                : late ? "Not landed after " + Math.round((Date.now() - at) / 1000) + " s: send again" : "Sent, waiting for the bridge";
              button.disabled = at != null && !late;
              button.addEventListener("click", () => display
                ? askPIN("acknowledge", b, async (pin, ok) => await acknowledge(b, ok, pin) ? true : failed[alarmKey(b)])
                : acknowledge(b, button));
              td.appendChild(button);
            }
          }
          if (!open.length) { const r = alarms.insertRow(); cell(r, site.link.connected ? "No open alarm." : "No open alarm known: the station cannot see the bridges.", "muted").colSpan = 8; }
          const banner = document.getElementById("banner");
          const untaken = open.filter(b => sent[alarmKey(b)] == null || notLanded(b, timeout));
          const lateCalls = site.calls.filter(c => c.late);
          const escalated = untaken.some(b => b.escalated) || lateCalls.length > 0;
          const texts = untaken.map(b => b.device + (b.wearer ? " (" + b.wearer + ")" : "") + (b.escalated ? ": NOBODY ACCEPTED IT, escalated" : "") +
                                         (notLanded(b, timeout) ? ": the acknowledgement did not land" : ""))
            .concat(lateCalls.map(c => c.device + (c.wearer ? " (" + c.wearer + ")" : "") + ": accepted by " + c.acceptedBy + ", NOBODY THERE YET" + (c.escalated ? ", escalated" : "")));
          banner.style.display = texts.length ? "block" : "none";
          banner.dataset.sounding = texts.length ? "1" : "0";
          banner.dataset.escalated = escalated ? "1" : "0";
          banner.textContent = texts.length ? (escalated ? "ESCALATED ALARM: " : "ALARM: ") + texts.join(", ") : "";
          if (texts.length) escalated ? loudBeep() : beep();
          renderCalls(site);
          const onFloor = floorFilter(site);
          for (const row of alarms.rows) { const b = site.bridges.find(x => x.device === row.dataset.device); if (b && b.floor) { row.dataset.floor = b.floor; if (!onFloor(b)) row.cells[2].textContent += " (" + b.floor + ": another floor)"; } }
          const list = document.getElementById("bridges");
          list.replaceChildren();
          for (const b of site.bridges) {
            if (!onFloor(b) && !b.alarmOpen && !b.faults.length) continue;
            const row = list.insertRow(); row.dataset.device = b.device; if (b.floor) row.dataset.floor = b.floor;
            row.className = (b.alarmOpen ? "alarm" : b.faults.length ? "fault" : "") + (b.stale ? " stale" : "");
            cell(row, b.device); cell(row, b.wearer); cell(row, b.location);
            cell(row, (b.online == null ? "unknown" : b.online ? "online" : "OFFLINE") +
                      (!b.stale ? "" : site.link.connected ? " (not heard since the link came back)" : " (stale: as of " + clock(site.link.since) + ")"), "online");
            cell(row, b.state, "state");
            cell(row, b.faults.length ? b.faults.join("; ").toUpperCase() : "ok", b.faults.length ? "warn" : "");
            cell(row, ago(site.now, b.lastHeartbeat)); cell(row, ago(site.now, b.lastSeen));
            cell(row, incidentText(b.incident || b.previousIncident), "incident");
          }
          window.station.renders++;
          document.getElementById("count").textContent = "(" + site.bridges.length + ", " + site.bridges.filter(b => b.online === false).length + " offline" +
            (site.link.connected ? ")" : ", none current)");
          const link = document.getElementById("link");
          link.textContent = site.link.connected ? "Connected to the broker " + site.link.broker + " since " + clock(site.link.since)
            : "NOT CONNECTED to the broker " + site.link.broker + " since " + clock(site.link.since) + (site.link.problem ? ": " + site.link.problem : "");
          link.className = site.link.connected ? "muted" : "warn";
          link.dataset.connected = site.link.connected ? "1" : "0";
          showFaults();
        }
        // Floors or wings (issue 37 item 5): the member's floors in the shift now first; the
        // choice kept in this browser. Alarms and faults are never filtered out.
        function floorFilter(site) {
          const f = site.floors || {all: [], mine: []}, select = document.getElementById("floor");
          document.getElementById("floors").hidden = !f.all.length;
          const options = [""].concat(f.mine.length ? ["mine"] : [], f.all);
          if (select.dataset.options !== options.join("\n")) {
            select.replaceChildren(...options.map(v => new Option(v === "" ? "every floor" : v === "mine" ? "my floors: " + f.mine.join(", ") : v, v)));
            select.dataset.options = options.join("\n");
            const kept = localStorage.getItem("fallguard-floor");
            select.value = kept != null && options.includes(kept) ? kept : f.mine.length ? "mine" : "";
          }
          document.getElementById("shift").textContent = f.shift ? "Shift: " + f.shift : "";
          const v = select.value;
          return b => v === "" || (v === "mine" ? f.mine.includes(b.floor) : b.floor === v);
        }
        document.getElementById("floor").addEventListener("change", e => { localStorage.setItem("fallguard-floor", e.target.value); if (lastSite) render(lastSite); });
        async function poll(once) {
          const control = new AbortController(), timer = setTimeout(() => control.abort(), 3000);
          try {
            const r = await fetch("/site.json", {credentials: "same-origin", cache: "no-store", signal: control.signal});
            if (r.status === 401) { signedOut = true; lastError = "signed out"; showFaults(); setTimeout(poll, 5000); return; }
            signedOut = false;
            if (!r.ok) throw new Error("HTTP " + r.status);
            const site = await r.json();
            lastOk = Date.now(); lastError = null;
            render(site);
            document.getElementById("connection").textContent = site.broker;
          } catch (e) {
            lastError = String(e);
            document.getElementById("connection").textContent = "The station does not answer: " + e;
          } finally { clearTimeout(timer); }
          if (once !== true) setTimeout(poll, 1000);
        }
        // The page's own watchdog: /site.json failing or late is a fault call too.
        setInterval(() => { if (Date.now() - lastOk > 3000) showFaults(); }, 500);
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
            cell(row, told(i)); cell(row, i.acknowledgedBy, "answered"); cell(row, span(i.secondsToAcknowledge) + (i.secondsToAcknowledge != null && !i.timedByBridge ? " (as seen here)" : ""), "to-answer");
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
        document.getElementById("sound").addEventListener("click", () => { soundOn(); beep(); });
        for (const e of ["pointerdown", "keydown"]) document.addEventListener(e, () => { if (!audio || audio.state !== "running") soundOn(); });
        soundOn();
        poll();
        pollPast();
        """#

    /// Seconds an acknowledgement sent from the page may take to land (the bridge's
    /// `acknowledged` incident) before the page shows it as not landed and offers it again.
    public static let acknowledgementTimeout = 10.0

    /// What `/site.json` sends.
    public struct Site: Encodable {
        public var now: Double
        /// The member signed in (nil: a display).
        public var me: String?
        public var display: Bool
        public var broker: String
        /// The station's own link to the broker: when it is down, nothing below is current.
        public var link: SiteModel.Link
        public var acknowledgementTimeout: Double
        public var bridges: [Bridge]
        /// Accepted calls not yet reset (presence, then reset), newest first.
        public var calls: [Call]
        public var floors: Floors
    }

    public struct Call: Encodable {
        var key, device: String
        var wearer, location, incident, kind: String?
        var acceptedBy: String
        var acceptedAt: Double
        var presenceDue: Double
        var presentBy: String?
        var presentAt: Double?
        /// Presence overdue now; escalated: told to the on-call contact.
        var late, escalated: Bool
    }

    public struct Bridge: Encodable, Sendable, Equatable {
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
        var raisedAt: Double?
        var raisedSeenAt: Double?
        var incident: SiteModel.Incident?
        var previousIncident: SiteModel.Incident?
        /// Fault calls (offline, not worn, sensor): a banner and the fault tone.
        var faults: [String]
        /// Not confirmed since the station's link came back (or the link is down).
        var stale: Bool
        /// Its open alarm went unaccepted past `escalation.accept-within`.
        var escalated: Bool
        /// The resident's floor or wing (the roster's).
        var floor: String?
    }

    /// The floors as the page filters by them (issue 37 item 5).
    public struct Floors: Encodable, Sendable, Equatable {
        /// Device → floor.
        var of: [String: String]
        /// Every floor, sorted.
        var all: [String]
        /// The shift now (nil: none configured or none now).
        var shift: String?
        /// The floors the member signed in looks after in this shift (empty: every floor).
        var mine: [String]

        public init(of: [String: String] = [:], shift: String? = nil, mine: [String] = []) {
            (self.of, self.shift, self.mine) = (of, shift, mine)
            all = Set(of.values).sorted()
        }
        enum CodingKeys: String, CodingKey { case all, shift, mine }
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
        /// ``secondsToAcknowledge`` from the bridge's own times (else the station's).
        var timedByBridge: Bool
        var outcome: String
    }

    /// The past incidents as CSV, newest first: each step's time (ISO 8601, UTC) and who took
    /// it, and the seconds each took (raised → accepted → present → reset). A cell that a
    /// spreadsheet would take as a formula starts with an apostrophe.
    /// `shift`: the shift's name at a time (nil: none).
    public static func incidentsCSV(_ records: [PastIncidents.Record], shift: (Double) -> String? = { _ in nil }) -> String {
        func time(_ t: Double?) -> String { t.map { iso8601(secondsSince1970: $0) } ?? "" }
        func seconds(_ s: Double?) -> String { s.map { String(format: "%.1f", $0) } ?? "" }
        func field(_ s: String?) -> String {
            var v = s ?? ""
            if let first = v.first, "=+-@\t\r".contains(first) { v = "'" + v }
            return v.contains(where: { ",\"\n\r".contains($0) }) ? "\"" + v.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : v
        }
        var lines = ["raised_at,device,wearer,location,floor,shift,incident,kind,alert_at,told,accepted_by,accepted_at,seconds_to_accept,accept_timed_by,"
            + "present_by,present_at,seconds_to_presence,reset_by,reset_at,seconds_to_reset,escalated_unaccepted_at,"
            + "escalated_no_presence_at,escalated_again_unaccepted_at,escalated_again_no_presence_at,outcome,ended_at"]
        for r in records {
            let told = [r.delivered ? "delivered" : nil, r.reachedBy.map { "answered by " + $0 }].compactMap { $0 }.joined(separator: "; ")
            lines.append([time(r.raisedAt), field(r.device), field(r.wearer), field(r.location), field(r.floor), field(shift(r.raisedAt)),
                          field(r.incident), field(r.kind),
                          time(r.alertAt), field(told), field(r.acknowledgedBy), time(r.acknowledgedAt), seconds(r.secondsToAcknowledge),
                          r.secondsToAcknowledge == nil ? "" : r.timedByBridge ? "bridge" : "station",
                          field(r.presentBy), time(r.presentAt), seconds(r.secondsToPresence), field(r.resetBy), time(r.resetAt),
                          seconds(r.secondsToReset), time(r.unacceptedEscalatedAt), time(r.noPresenceEscalatedAt),
                          time(r.unacceptedAgainAt), time(r.noPresenceAgainAt), r.outcome,
                          time(r.endedAt)].joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    public static func incidentsJSON(_ records: [PastIncidents.Record], days: Int, now: Double, problem: String?) -> String {
        let history = History(now: now, days: days, problem: problem, incidents: records.map { r in
            PastIncident(key: r.key, device: r.device, incident: r.incident, kind: r.kind, wearer: r.wearer, location: r.location,
                         raisedAt: r.raisedAt, delivered: r.delivered, reachedBy: r.reachedBy, acknowledgedBy: r.acknowledgedBy,
                         acknowledgedAt: r.acknowledgedAt, secondsToAcknowledge: r.secondsToAcknowledge, endedAt: r.endedAt,
                         timedByBridge: r.timedByBridge, outcome: r.outcome)
        })
        let e = JSONEncoder()
        e.outputFormatting = [.withoutEscapingSlashes]
        return (try? String(decoding: e.encode(history), as: UTF8.self)) ?? "{}"
    }

    /// The rows of `/site.json` as last encoded, by device: a poll encodes only the rows that
    /// changed since (issue 40: encoding all 1,001 bridges at every poll cost a debug build
    /// ~0.4 s of CPU, which a page polling every second took from the station reading a flood).
    public struct EncodedRows: Sendable {
        var rows: [String: (row: Bridge, json: String)] = [:]
        public init() {}
        /// Rows encoded by the last call (the rest were kept).
        public internal(set) var encoded = 0
    }

    /// `calls`: the past incidents (the accepted ones not yet reset are listed; an open one
    /// escalated marks its bridge); `escalation`: the steps' timers.
    public static func json(_ model: SiteModel, me: String?, link: SiteModel.Link, now: Double,
                            calls records: [PastIncidents.Record] = [], escalation: (acceptWithin: Double, presenceWithin: Double) = (60, 300),
                            floors: Floors = Floors()) -> String {
        var rows = EncodedRows()
        return json(model, me: me, link: link, now: now, calls: records, escalation: escalation, floors: floors, rows: &rows)
    }

    /// As above, each bridge's row taken from `rows` when it has not changed, and kept there.
    public static func json(_ model: SiteModel, me: String?, link: SiteModel.Link, now: Double,
                            calls records: [PastIncidents.Record], escalation: (acceptWithin: Double, presenceWithin: Double),
                            floors: Floors, rows cache: inout EncodedRows) -> String {
        let escalatedDevices = Set(records.filter { $0.endedAt == nil && $0.acknowledgedBy == nil && $0.unacceptedEscalatedAt != nil }.map(\.device))
        let calls = records.filter(\.inProgress).map { r in
            let due = r.acknowledgedAt! + escalation.presenceWithin
            return Call(key: r.key, device: r.device, wearer: r.wearer, location: r.location, incident: r.incident, kind: r.kind,
                        acceptedBy: r.acknowledgedBy ?? "someone", acceptedAt: r.acknowledgedAt!, presenceDue: due,
                        presentBy: r.presentBy, presentAt: r.presentAt, late: r.presentAt == nil && now >= due,
                        escalated: r.noPresenceEscalatedAt != nil)
        }
        let e = JSONEncoder()
        e.outputFormatting = [.withoutEscapingSlashes]
        let ordered = model.ordered
        if cache.rows.count > ordered.count { cache.rows.removeAll() }   // bridges gone: start again
        cache.encoded = 0
        var body = "["
        body.reserveCapacity(ordered.count * 400)
        for (n, b) in ordered.enumerated() {
            let row = Bridge(device: b.device, wearer: b.wearer, location: b.location, online: b.online, state: b.state, lastSeen: b.lastSeen,
                             lastHeartbeat: b.lastHeartbeat, sensorProblem: b.sensorProblem, worn: b.worn, alarmOpen: b.alarmOpen, alarmSince: b.alarmSince,
                             raisedAt: b.raisedAt, raisedSeenAt: b.raisedSeenAt, incident: b.incident, previousIncident: b.previousIncident,
                             faults: b.faults, stale: SiteModel.isStale(b, link: link), escalated: b.alarmOpen && escalatedDevices.contains(b.device),
                             floor: floors.of[b.device])
            var text: String
            if let kept = cache.rows[b.device], kept.row == row {
                text = kept.json
            } else {
                text = (try? String(decoding: e.encode(row), as: UTF8.self)) ?? "{}"
                cache.rows[b.device] = (row, text)
                cache.encoded += 1
            }
            if n > 0 { body += "," }
            body += text
        }
        body += "]"
        // The rest encoded with no rows, and the rows put in their place: `"bridges":[]` occurs
        // once (inside a JSON string every quote is escaped).
        let site = Site(now: now, me: me, display: me == nil, broker: "broker " + link.broker, link: link, acknowledgementTimeout: acknowledgementTimeout,
                        bridges: [], calls: calls, floors: floors)
        let rest = (try? String(decoding: e.encode(site), as: UTF8.self)) ?? "{}"
        guard let slot = rest.range(of: #""bridges":[]"#) else { return rest }
        return rest.replacingCharacters(in: slot, with: #""bridges":"# + body)
    }
}
