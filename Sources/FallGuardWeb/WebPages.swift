import FallGuardCore
import FallGuardFieldTest

/// One message of the outbox as the page lists it (its error already redacted).
public struct WebDelivery: Sendable, Equatable {
    public var incident: String
    public var channel: String
    /// The contact's name, nil for a channel without one (MQTT, webhook).
    public var to: String?
    public var state: String
    public var attempts: Int
    public var error: String?
    /// Wall-clock time the message was queued, ISO 8601.
    public var created: String?

    public init(incident: String, channel: String, to: String?, state: String, attempts: Int, error: String?, created: String?) {
        (self.incident, self.channel, self.to, self.state) = (incident, channel, to, state)
        (self.attempts, self.error, self.created) = (attempts, error, created)
    }
}

/// The page's HTML, rendered on the bridge: no CDN, no build chain. Every text that came from
/// outside (names, errors, notes) is escaped; secrets never reach these functions unredacted.
public enum WebPages {
    static let style = """
        body{font:15px/1.4 system-ui,sans-serif;margin:0 auto;max-width:980px;padding:12px;color:#222}
        h1{font-size:22px;margin:4px 0}h2{font-size:17px;margin:18px 0 6px}
        table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:3px 6px;text-align:left;font-size:14px}
        .state{font-size:26px;font-weight:600;padding:8px 12px;border-radius:6px;background:#e8f5e9}
        .state.countdown{background:#fff3cd}.state.alert-out,.state.sensor-fault{background:#f8d7da}.state.problem{background:#fff3cd;border:2px solid #c60}
        .muted{color:#666}.err{color:#a00}nav a{margin-right:12px}
        button{font-size:15px;padding:6px 14px;margin-right:6px}
        .plot{max-width:100%;height:auto}
        """

    public static func layout(title: String, body: String, signedIn: Bool, formToken: String?) -> String {
        let logout = signedIn && formToken != nil
            ? "<form method=\"post\" action=\"/logout\" style=\"display:inline\"><input type=\"hidden\" name=\"csrf\" value=\"\(htmlEscaped(formToken!))\"><button>Sign out</button></form>"
            : ""
        return """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><link rel="icon" href="data:,">
            <title>\(htmlEscaped(title))</title><style>\(style)</style></head><body>
            <nav><a href="/">Now</a><a href="/incidents">Incidents</a><a href="/deliveries">Deliveries</a>\(logout)</nav>
            \(body)</body></html>
            """
    }

    public static func login(message: String?) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><link rel="icon" href="data:,">
        <title>FallGuard: sign in</title><style>\(style)</style></head><body>
        <h1>FallGuard</h1><p>This bridge's page needs its password.</p>
        \(message.map { "<p class=\"err\" id=\"login-error\">\(htmlEscaped($0))</p>" } ?? "")
        <form method="post" action="/login"><input type="password" name="password" autocomplete="current-password" autofocus>
        <button>Sign in</button></form></body></html>
        """
    }

    /// The incidents, newest first.
    public static func incidentsTable(_ records: [IncidentRecord], unreadable: [String] = []) -> String {
        guard !records.isEmpty || !unreadable.isEmpty else { return "<p class=\"muted\" id=\"no-incidents\">No incidents yet.</p>" }
        var out = "<table id=\"incidents\"><tr><th>Incident</th><th>When</th><th>Kind</th><th>Outcome</th><th>Label</th></tr>"
        for r in records.reversed() {
            let label = r.label.map { "\(htmlEscaped($0.label.rawValue)) <span class=\"muted\">by \(htmlEscaped($0.by))</span>" } ?? "<span class=\"muted\">none</span>"
            out += "<tr data-incident=\"\(htmlEscaped(r.id))\"><td><a href=\"/incidents/\(urlPathEscaped(r.id))\">\(htmlEscaped(r.id))</a></td><td>\(htmlEscaped(String(r.eventWallTime.prefix(19)).replacingT() + r.clockMark))</td><td>\(htmlEscaped(r.kind))</td><td>\(htmlEscaped(r.outcome))</td><td class=\"label\">\(label)</td></tr>"
        }
        out += "</table>"
        for u in unreadable { out += "<p class=\"err\">unreadable: \(htmlEscaped(u))</p>" }
        return out
    }

    /// Pending, sent and failed messages per channel and contact, then the newest ones with their errors.
    public static func deliveriesTable(_ deliveries: [WebDelivery], recent: Int = 30) -> String {
        guard !deliveries.isEmpty else { return "<p class=\"muted\" id=\"no-deliveries\">No messages yet.</p>" }
        struct Key: Hashable { var channel: String; var to: String }
        var order: [Key] = []
        var counts: [Key: [String: Int]] = [:]
        var lastError: [Key: String] = [:]
        for d in deliveries {
            let k = Key(channel: d.channel, to: d.to ?? "—")
            if counts[k] == nil { order.append(k) }
            counts[k, default: [:]][d.state, default: 0] += 1
            if let e = d.error, d.state != "sent" { lastError[k] = e }
        }
        var out = "<table id=\"delivery-summary\"><tr><th>Channel</th><th>To</th><th>Pending</th><th>Sent</th><th>Failed</th><th>Last error</th></tr>"
        for k in order {
            let c = counts[k] ?? [:]
            out += "<tr><td>\(htmlEscaped(k.channel))</td><td>\(htmlEscaped(k.to))</td><td>\((c["pending"] ?? 0) + (c["armed"] ?? 0))</td><td>\(c["sent"] ?? 0)</td><td>\(c["failed"] ?? 0)</td><td class=\"err\">\(htmlEscaped(lastError[k] ?? ""))</td></tr>"
        }
        out += "</table><h2>Newest messages</h2><table id=\"deliveries\"><tr><th>Queued</th><th>Incident</th><th>Channel</th><th>To</th><th>State</th><th>Tries</th><th>Error</th></tr>"
        for d in deliveries.suffix(recent).reversed() {
            out += "<tr><td>\(htmlEscaped((d.created ?? "").prefix(19).replacingT()))</td><td>\(htmlEscaped(d.incident))</td><td>\(htmlEscaped(d.channel))</td><td>\(htmlEscaped(d.to ?? "—"))</td><td>\(htmlEscaped(d.state))</td><td>\(d.attempts)</td><td class=\"err\">\(htmlEscaped(d.error ?? ""))</td></tr>"
        }
        return out + "</table>"
    }

    /// One incident: its signal plot (the field-test report's), detection, timeline, deliveries,
    /// labels, and the label buttons (a form with the session's token).
    public static func incident(_ r: IncidentRecord, signal: [AccelerationSample]?, deliveries: [WebDelivery],
                                formToken: String?, signalProblem: String? = nil) -> String {
        var out = "<h1>\(htmlEscaped(r.id)): \(htmlEscaped(r.kind))</h1>"
        out += "<p>\(htmlEscaped(String(r.eventWallTime.prefix(19)).replacingT())) UTC\(htmlEscaped(r.clockMark)) · outcome <b id=\"outcome\">\(htmlEscaped(r.outcome))</b> · detector \(htmlEscaped(r.detector.name)) (\(htmlEscaped(r.detector.software)))</p>"
        if let signal, !signal.isEmpty {
            let end = r.detection.map { max($0.decisionTime, $0.impactTime) + 3 } ?? r.eventTime + 8
            var p = SignalPlot(samples: signal, from: r.eventTime - 8, to: max(end, r.eventTime + 8))
            p.thresholds = thresholds(of: r.detector)
            p.detections = r.detection.map { [$0] } ?? []
            p.marks = r.timeline.filter { $0.event != "fall-suspected" && $0.t > p.from && $0.t < p.to }.map { .init(time: $0.t, text: $0.event) }
            out += "<div id=\"signal\">\(p.svg())</div>"
        } else {
            out += "<p class=\"muted\">\(htmlEscaped(signalProblem ?? "No signal kept for this incident."))</p>"
        }
        if let d = r.detection {
            out += "<p>Impact at \(fixedDecimal(d.impactTime - r.eventTime, digits: 2)) s, decided \(fixedDecimal(d.decisionTime - d.impactTime, digits: 2)) s later, peak \(fixedDecimal(d.peak, digits: 2)) g: \(htmlEscaped(d.reason))</p>"
        }
        out += "<h2>Label</h2><p id=\"label\">"
        out += r.label.map { "<b>\(htmlEscaped($0.label.rawValue))</b> by \(htmlEscaped($0.by)) at \(htmlEscaped($0.at))" } ?? "<span class=\"muted\">not labelled</span>"
        out += "</p>"
        if let formToken {
            out += "<form method=\"post\" action=\"/incidents/\(urlPathEscaped(r.id))/label\"><input type=\"hidden\" name=\"csrf\" value=\"\(htmlEscaped(formToken))\">"
            for l in IncidentLabel.allCases {
                out += "<button name=\"label\" value=\"\(l.rawValue)\" id=\"label-\(l.rawValue)\">\(l == .fall ? "Fall" : l == .noFall ? "No fall" : "Unsure")</button>"
            }
            out += "</form>"
        }
        if r.labels.count > 1 {
            out += "<p class=\"muted\">History: " + r.labels.map { "\(htmlEscaped($0.label.rawValue)) by \(htmlEscaped($0.by)) at \(htmlEscaped($0.at))" }.joined(separator: "; ") + "</p>"
        }
        out += "<h2>Timeline</h2><table id=\"timeline\"><tr><th>Time</th><th>s</th><th>Event</th><th>Detail</th></tr>"
        for s in r.timeline {
            out += "<tr><td>\(htmlEscaped(String(s.time.prefix(19)).replacingT()))</td><td>\(fixedDecimal(s.t - r.eventTime, digits: 1))</td><td>\(htmlEscaped(s.event))</td><td>\(htmlEscaped(s.detail))</td></tr>"
        }
        out += "</table>"
        let acks = r.timeline.filter { $0.event == "acknowledged" }
        out += "<h2>Acknowledgements</h2>" + (acks.isEmpty ? "<p class=\"muted\">None.</p>"
            : "<ul>" + acks.map { "<li>\(htmlEscaped(String($0.time.prefix(19)).replacingT())): \(htmlEscaped($0.detail))</li>" }.joined() + "</ul>")
        out += "<h2>Deliveries</h2>" + deliveriesTable(deliveries)
        return out
    }

    /// The thresholds on |a| among the detector's settings as recorded (those in g of 1 or more).
    public static func thresholds(of d: IncidentRecord.DetectorInfo) -> [(name: String, g: Double)] {
        let parameters = (try? DetectorCatalog.parameters(for: d.name)) ?? []
        return parameters.compactMap { p in
            guard p.unit == "g", let v = d.settings[p.key], v >= 1 else { return nil }
            return (p.key, v)
        }
    }

    /// An incident id in a path: letters, digits, `-`, `_`, `.` pass; anything else is %-escaped.
    public static func urlPathEscaped(_ s: String) -> String {
        percentEncoded(s) { isURLUnreserved($0) && $0 != "~" }
    }

    /// The main page: now, live, incidents, deliveries. The script opens the stream `/live`.
    public static func main(incidents: String, deliveries: String, formToken: String?, signedIn: Bool) -> String {
        layout(title: "FallGuard", body: """
            <h1>FallGuard</h1>
            <div id="state" class="state">connecting…</div>
            <table id="now"><tr><th>Sensor</th><td id="sensor">—</td></tr><tr><th>Worn</th><td id="worn">—</td></tr><tr id="power-row" hidden><th>Power</th><td id="power">—</td></tr><tr id="modem-row" hidden><th>Modem</th><td id="modem">—</td></tr><tr><th>Outbox</th><td id="outbox">—</td></tr>
            <tr><th>Last incident</th><td id="last-incident">—</td></tr><tr><th>Last heartbeat</th><td id="heartbeat">—</td></tr>
            <tr><th>Problems</th><td id="problems">—</td></tr><tr><th>Updated</th><td id="updated">—</td></tr></table>
            <h2>Live: |a| over the last 60 s (and |ω| in purple from a sensor with a gyroscope)</h2>
            <canvas id="live" width="940" height="220" style="width:100%;max-width:940px;border:1px solid #ccc"></canvas>
            <p class="muted" id="live-info">waiting for samples…</p>
            <h2>Incidents</h2><div id="incident-list">\(incidents)</div>
            <h2>Deliveries</h2><div id="delivery-list">\(deliveries)</div>
            <script src="/page.js"></script>
            """, signedIn: signedIn, formToken: formToken)
    }

    /// The live plot and the status panel. `window.fallguard` holds what a test or a curious
    /// person can read: updates received, their rate, and the delay from a sample's capture to
    /// the moment its pixels were drawn.
    public static let script = """
        "use strict";
        const fg = window.fallguard = {updates: 0, samples: 0, latencies: [], last: null, status: null, lastValue: null, lastRate: null};
        const points = [];
        const canvas = document.getElementById("live"), ctx = canvas.getContext("2d");
        let thresholds = [], receivedAt = 0, listKey = "", pending = false;
        function fmt(s) { return s == null ? "—" : String(s); }
        function text(id, s) { const e = document.getElementById(id); if (e.textContent !== s) e.textContent = s; }
        function showStatus(s) {
          fg.status = s; receivedAt = performance.now();
          thresholds = s.thresholds || thresholds;
          const st = document.getElementById("state");
          st.className = "state " + s.state + (s.state === "monitoring" && s.problems && s.problems.length ? " problem" : "");
          const li = s.last_incident;
          text("sensor", s.sensor ? `${s.sensor.device}, ${s.sensor.mode}, ${Number(s.sensor.rate).toFixed(1)} Hz` + (s.sensor.axes ? `, ${s.sensor.axes}` : "") + (s.sensor.problems.length ? ` — ${s.sensor.problems.join(", ")}` : "") : "no sensor");
          const o = s.outbox;
          text("outbox", o ? `${o.pending} pending, ${o.sent} sent, ${o.failed} failed` + (o.held_in_memory ? `, ${o.held_in_memory} held in memory` : "") + (o.oldest_pending_age ? `, oldest waiting ${Math.round(o.oldest_pending_age)} s` : "") : "—");
          text("last-incident", li ? `${li.id} ${li.kind} at ${li.at.slice(0, 19).replace("T", " ")}` + (li.delivered ? ", delivered" : "") + (li.reached_by ? `, ${li.reached_by} answered` : "") + (li.acknowledged_by ? `, acknowledged by ${li.acknowledged_by}` : "") + (li.present_by ? `, ${li.present_by} at the bedside ${li.present_at.slice(11, 19)}` : "") + (li.reset_by ? `, reset by ${li.reset_by} ${li.reset_at.slice(11, 19)}` : "") : "none");
          text("heartbeat", s.heartbeat || "none sent");
          const nw = s.not_worn;
          text("worn", nw ? `NOT WORN since ${nw.since.slice(0, 19).replace("T", " ")}: falls cannot be detected` + (nw.reported ? " (the helpers were told)" : "") : "yes");
          const pw = s.power;
          document.getElementById("power-row").hidden = !pw;
          if (pw) text("power", pw.batteries.map(b => `battery ${b.capacity != null ? b.capacity + " %" : "?"} (${b.status})`).concat(pw.mains_online == null ? [] : [pw.mains_online ? "mains online" : "ON BATTERY" + (pw.on_battery_since ? ` since ${pw.on_battery_since.slice(0, 19).replace("T", " ")}` : "")]).join(", ") + (pw.shutting_down ? " — SHUTTING DOWN" : pw.battery_low ? " — BATTERY LOW" : ""));
          const md = s.modem;
          document.getElementById("modem-row").hidden = !md;
          if (md) text("modem", `${md.state}` + (md.signal_percent != null ? `, signal ${md.signal_percent} %` : "") + (md.registration ? `, ${md.registration}` : "") + (md.operator_name ? ` (${md.operator_name})` : "") + (md.problem ? ` — ${md.problem}` : ""));
          text("problems", s.problems && s.problems.length ? s.problems.join("; ") : "none");
          text("updated", new Date().toLocaleTimeString());
          const key = JSON.stringify([li && li.id, li && li.acknowledged_by, li && li.present_by, li && li.reset_by, li && li.delivered, o && o.pending, o && o.sent, o && o.failed, s.state]);
          if (listKey && key !== listKey) refreshLists();
          listKey = key;
          tickState();
        }
        function tickState() {
          const s = fg.status; if (!s) return;
          let t = {"monitoring": "Monitoring", "alert-out": "Alert out", "sensor-fault": "Sensor fault"}[s.state] || s.state;
          if (s.state === "countdown" && s.countdown_remaining != null) {
            const left = Math.max(0, s.countdown_remaining - (performance.now() - receivedAt) / 1000);
            t = `Countdown: ${Math.ceil(left)} s left (${s.incident}) — press the button if all is well`;
          } else if (s.state === "alert-out") {
            const li = s.last_incident;
            t = `Alert out (${s.incident || ""})` + (li && li.reached_by ? `, ${li.reached_by} answered` : li && li.delivered ? ", delivered" : ", being sent");
          } else if (s.state === "monitoring" && s.problems && s.problems.length) {
            t = `Monitoring — PROBLEM: ${s.problems[0].split(" (")[0]}`;
          } else if (s.state === "monitoring" && s.last_incident && s.last_incident.acknowledged_by) {
            t = `Monitoring — ${s.last_incident.id} accepted by ${s.last_incident.acknowledged_by}` + (s.last_incident.reset_by ? `, reset by ${s.last_incident.reset_by}` : s.last_incident.present_by ? `, ${s.last_incident.present_by} at the bedside` : "");
          }
          text("state", t);
        }
        setInterval(tickState, 250);
        async function refreshLists() {
          for (const [id, url] of [["incident-list", "/fragments/incidents"], ["delivery-list", "/fragments/deliveries"]]) {
            const r = await fetch(url, {credentials: "same-origin"});
            if (r.ok) document.getElementById(id).innerHTML = await r.text();
          }
        }
        function draw() {
          pending = false;
          const w = canvas.width, h = canvas.height, now = Date.now();
          while (points.length && points[0][0] < now - 60000) points.shift();
          const top = Math.max(4, ...thresholds.map(t => t.g * 1.1), ...points.map(p => p[1] / 1000 * 1.1));
          ctx.clearRect(0, 0, w, h);
          ctx.font = "11px sans-serif"; ctx.fillStyle = "#666";
          for (let g = 0; g <= top; g += top > 10 ? 2 : 1) { const y = h - g / top * h; ctx.fillText(String(g), 2, y - 2); ctx.fillStyle = "#eee"; ctx.fillRect(0, y, w, 1); ctx.fillStyle = "#666"; }
          ctx.setLineDash([6, 4]); ctx.strokeStyle = "#c60";
          for (const t of thresholds) { const y = h - t.g / top * h; ctx.beginPath(); ctx.moveTo(0, y); ctx.lineTo(w, y); ctx.stroke(); ctx.fillStyle = "#c60"; ctx.fillText(`${t.name} ${t.g} g`, w - 160, y - 3); }
          ctx.setLineDash([]); ctx.strokeStyle = "#036"; ctx.lineWidth = 1.5; ctx.beginPath();
          points.forEach((p, i) => { const x = w - (now - p[0]) / 60000 * w, y = h - p[1] / 1000 / top * h; i ? ctx.lineTo(x, y) : ctx.moveTo(x, y); });
          ctx.stroke();
          // |ω| (°/s) from a sensor with a gyroscope, on its own scale (right)
          const turning = points.filter(p => p[3] >= 0);
          if (turning.length) {
            const topRate = Math.max(250, ...turning.map(p => p[3] * 1.1));
            ctx.strokeStyle = "#a0a"; ctx.fillStyle = "#a0a"; ctx.lineWidth = 1; ctx.beginPath();
            turning.forEach((p, i) => { const x = w - (now - p[0]) / 60000 * w, y = h - p[3] / topRate * h; i ? ctx.lineTo(x, y) : ctx.moveTo(x, y); });
            ctx.stroke();
            ctx.fillText(`${Math.round(topRate)} °/s`, w - 60, 12);
          }
          if (points.length) {
            ctx.getImageData(w - 2, 0, 1, 1);   // the pixels exist now
            const drawn = Date.now();
            for (const p of points) if (!p[2]) { p[2] = 1; fg.latencies.push(drawn - p[0]); }
            if (fg.latencies.length > 4000) fg.latencies.splice(0, fg.latencies.length - 4000);
            const last = points[points.length - 1];
            fg.lastValue = last[1] / 1000;
            fg.lastRate = last[3] >= 0 ? last[3] : null;
            text("live-info", `|a| ${fg.lastValue.toFixed(2)} g` + (fg.lastRate !== null ? ` · |ω| ${fg.lastRate} °/s` : "")
                 + ` · ${fg.updates} updates · ${fg.samples} samples`);
          }
        }
        function connect() {
          const es = new EventSource("/live");
          es.addEventListener("status", e => showStatus(JSON.parse(e.data)));
          es.addEventListener("samples", e => {
            const batch = JSON.parse(e.data);
            fg.updates++; fg.samples += batch.length; fg.last = performance.now();
            text("updated", new Date().toLocaleTimeString());
            for (const p of batch) points.push([p[0], p[1], 0, p.length > 2 ? p[2] : -1]);   // [ms, mg, drawn, °/s]
            if (!pending) { pending = true; requestAnimationFrame(draw); }
          });
          es.onerror = () => { text("state", "connection lost, retrying…"); document.getElementById("state").className = "state sensor-fault"; };
        }
        connect();
        """
}

extension StringProtocol {
    func replacingT() -> String { String(self).split(separator: "T", maxSplits: 1).joined(separator: " ") }
}
