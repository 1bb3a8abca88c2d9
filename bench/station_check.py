#!/usr/bin/env python3
"""The staff station (`fallguard station`, issue 30) with a site of BRIDGES bridges, in Debian's
headless chromium; driven by bench/station.sh.

One real `fallguard run` (room-000, the release build) replays a real fall; the other bridges
are their retained messages on the broker (availability, state, last incident), as bridges
leave them. Checks, with PASS/FAIL lines and 'N passed, N failed':
  - without a login every page answers 401 (curl);
  - a member of staff signs in; the page lists every bridge;
  - the new alarm is on screen within 2 s of the bridge raising it (its `countdown` and its
    `alert-out` on the broker → the row and the acknowledge button in the page), the page sounds;
  - one click acknowledges it as that member; the bridge shows the name (its retained incident),
    the page shows who answered and stops sounding;
  - the incidents of the last days list it (who answered, the time to answer), and the station's
    SQLite file (station.state-directory) holds it.
"""
import json, os, shutil, sqlite3, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools/page-check"))
import care_home as ch   # noqa: E402
from cdp import Browser, BrowserError   # noqa: E402

BRIDGES = int(os.environ.get("BRIDGES", "200"))
OUT = os.environ.get("OUT") or os.path.join(ch.ROOT, "bench/out/station")
QUIET = 25.0
results = []


def check(ok, text):
    results.append(bool(ok))
    print(("PASS: " if ok else "FAIL: ") + text, flush=True)


def curl(url, *extra):
    r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5", *extra, url],
                       capture_output=True, text=True)
    return int(r.stdout or 0)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT + "/broker")
    port = ch.free_port()
    broker = ch.Broker(OUT + "/broker", port)
    broker.start()
    sub = ch.Subscriber(port, OUT + "/messages.tsv", topics=("fallguard/room-000/#",))
    # The other bridges, as their retained messages stand on the broker.
    lines = []
    for i in range(1, BRIDGES):
        d = ch.device(i)
        lines += [(f"fallguard/{d}/availability", "online" if i % 50 else "offline"), (f"fallguard/{d}/state", "monitoring")]
        if i % 7 == 0:
            lines.append((f"fallguard/{d}/incident", json.dumps({"incident": "FG-1", "kind": "acknowledged", "severity": "information",
                                                                 "at": "2026-11-25T10:00:00Z", "acknowledged-by": "Ben (SMS reply)"})))
    for topic, payload in lines:
        subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-q", "1", "-r", "-t", topic, "-m", payload], check=True)
    # The real bridge: still for QUIET s, then the demo's fall.
    rows = [tuple(float(v) for v in line.split(",")) for line in open(ch.DEMO).read().split("\n")[1:] if line.strip()]
    import random
    data = ch.rest_rows(rows[0], QUIET, random.Random(3)) + rows
    rec = OUT + "/fall.csv"
    with open(rec, "w") as f:
        f.write("x_g,y_g,z_g\n" + "".join(f"{x:.4f},{y:.4f},{z:.4f}\n" for x, y, z in data))
    # The station: two members of staff, the bridges' secret, who lives in room-000.
    web = ch.free_port()
    conf = OUT + "/station.yaml"
    with open(conf, "w") as f:
        f.write(f"""station:
  broker: {{host: 127.0.0.1, port: {port}}}
  listen: 127.0.0.1:{web}
  acknowledge-secret: {ch.SECRET}
  staff:
    - {{user: anna, name: Anna Smith, password: anna-station-pw}}
    - {{user: bob, name: Bob Jones, password: bob-station-pw}}
  residents:
    room-000: {{wearer: Margaret, location: "Room 0, ground floor"}}
  state-directory: {OUT}/station-state
""")
    os.chmod(conf, 0o600)
    station = subprocess.Popen([ch.BIN, "station", "--config", conf], stdout=subprocess.DEVNULL,
                               stderr=open(OUT + "/station.log", "w"))
    bridge = ch.Bridge(0, OUT + "/b000", rec, port)
    base = f"http://127.0.0.1:{web}"
    browser = None
    try:
        if not ch.wait_for(lambda: curl(base + "/") != 0, 20):
            raise SystemExit("the station did not start: " + open(OUT + "/station.log").read())
        codes = {p: curl(base + p) for p in ("/", "/site.json", "/station.js")}
        codes["/ack"] = curl(base + "/ack", "--data", "device=room-000&incident=FG-1")
        check(all(c == 401 for c in codes.values()), f"without a login: {codes}")
        check(curl(base + "/", "-H", f"Host: attacker.example:{web}") == 421, "a foreign Host on a loopback station: 421")

        browser = Browser()
        browser.navigate(base + "/")
        browser.wait_for("document.querySelector('input[name=password]') !== null", 10)
        browser.events = [e for e in browser.events if e.get("method") != "Page.loadEventFired"]
        browser.evaluate("document.getElementById('user').value = 'anna'; document.getElementById('password').value = 'anna-station-pw';"
                         " document.querySelector('form').submit(); true")
        browser.wait_event("Page.loadEventFired", 15)
        bridge.start()   # the fall comes QUIET s from now
        shown = browser.wait_for(f"window.station && document.querySelectorAll('#bridges tr').length >= {BRIDGES} && "
                                 "document.getElementById('me').textContent", 30)
        offline = browser.evaluate("[...document.querySelectorAll('#bridges td.online')].filter(t => t.textContent === 'OFFLINE').length")
        check(shown == "Anna Smith", f"signed in as '{shown}'; the page lists {BRIDGES} bridges, {offline} offline")

        # The alarm: countdown on the broker → the row; alert-out → the acknowledge button.
        row_at = button_at = None
        deadline = time.time() + QUIET + 40
        while time.time() < deadline and button_at is None:
            state = browser.evaluate("(() => { const r = document.querySelector('#alarms tr[data-device=\"room-000\"]');"
                                     " return r ? (r.querySelector('button[data-ack]') ? 2 : 1) : 0 })()")
            now = time.time()
            if state >= 1 and row_at is None:
                row_at = now
            if state == 2:
                button_at = now
            browser.pump(0.05)
        msgs = sub.messages()
        countdown = next((ts for ts, t, r, p in msgs if t.endswith("/state") and p == "countdown"), None)
        alert_out = next((ts for ts, t, r, p in msgs if t.endswith("/state") and p == "alert-out"), None)
        d1 = row_at - countdown if row_at and countdown else None
        d2 = button_at - alert_out if button_at and alert_out else None
        check(d1 is not None and d1 <= 2, f"the alarm on screen {d1 if d1 is not None else float('nan'):.2f} s after the bridge's "
                                          f"countdown reached the broker (bar 2 s)")
        check(d2 is not None and d2 <= 2, f"its acknowledge button {d2 if d2 is not None else float('nan'):.2f} s after the bridge "
                                          f"raised the alert (alert-out on the broker; bar 2 s)")
        first = browser.evaluate("document.querySelector('#alarms tr').dataset.device")
        sounding = browser.evaluate("document.getElementById('banner').dataset.sounding")
        beeps = browser.evaluate("window.station.beeps")
        check(first == "room-000" and sounding == "1" and beeps >= 1, f"open alarms first ({first}), sounding {sounding}, {beeps} beeps")
        browser.screenshot(OUT + "/station-alarm.png")

        clicked = time.time()
        browser.evaluate("document.querySelector('button[data-ack=\"room-000\"]').click(); true")

        def bridge_name():
            for ts, t, r, p in reversed(sub.messages()):
                if t.endswith("/incident") and ts >= clicked:
                    a = json.loads(p)
                    if a.get("kind") == "acknowledged":
                        return ts, a.get("acknowledged-by")
            return None
        got = ch.wait_for(bridge_name, 15)
        check(got and "Anna Smith" in (got[1] or ""), f"one click: the bridge shows who acknowledged: {got[1] if got else None!r} "
                                                       f"({(got[0] - clicked) if got else float('nan'):.2f} s after the click)")
        answered = browser.wait_for("(() => { const r = document.querySelector('#bridges tr[data-device=\"room-000\"] td.incident');"
                                    " return r && r.textContent.includes('Anna Smith') ? r.textContent : '' })()", 10)
        quiet = browser.wait_for("document.getElementById('banner').dataset.sounding === '0' && "
                                 "!document.querySelector('#alarms tr[data-device=\"room-000\"]')", 10)
        check(bool(answered) and quiet, f"the page shows '{answered}', the alarm left the open list and the sound stopped")
        told = ch.wait_for(lambda: bridge.outbox("SELECT alert_json FROM alert WHERE kind = 'acknowledged'"), 10)
        check(told and "Anna Smith" in told[0][0], f"the bridge's 'acknowledged' alert to its contacts names her: "
                                                 f"{json.loads(told[0][0]).get('acknowledgedBy') if told else None!r}")
        past = browser.wait_for("(() => { const r = document.querySelector('#past tr[data-device=\"room-000\"]');"
                                " return r && r.querySelector('td.answered').textContent.includes('Anna Smith') && "
                                "r.querySelector('td.outcome').textContent === 'acknowledged' ? "
                                "[...r.cells].map(c => c.textContent).join(' | ') : '' })()", 15)
        others = browser.evaluate("[...document.querySelectorAll('#past tr')].filter(r => r.dataset.device !== 'room-000' && "
                                  "(r.textContent.includes('Margaret') || r.textContent.includes('Anna Smith'))).length")
        listed = browser.evaluate("document.querySelectorAll('#past tr[data-device]').length")
        check(bool(past) and others == 0, f"the incidents of the last days list it ({listed} listed; {others} other rows with "
                                          f"its wearer or its answer): {past!r}")
        with sqlite3.connect(OUT + "/station-state/station.sqlite") as db:
            kept = db.execute("SELECT incident, acknowledged_by, round(acknowledged_at - raised_at, 2) FROM past_incident"
                              " WHERE device = 'room-000'").fetchall()
        check(len(kept) == 1 and "Anna Smith" in (kept[0][1] or ""), f"and the station's SQLite file keeps it: {kept}")
        browser.screenshot(OUT + "/station-acknowledged.png")
        # The first load answered 401 with the login form, as it must: not an error of the page.
        errors = [e for e in browser.console_errors if not ("status of 401" in e and e.endswith(base + "/"))]
        check(not errors, f"no errors in the browser's console: {errors[:3]}")
    except BrowserError as e:
        check(False, f"browser: {e}")
    finally:
        if browser:
            browser.close()
        if bridge.proc:
            bridge.proc.terminate()
            bridge.proc.wait(20)
        station.terminate()
        station.wait(20)
        sub.stop()
        broker.stop()
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
