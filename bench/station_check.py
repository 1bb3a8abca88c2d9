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
    SQLite file (station.state-directory) holds it;
  - issue 37: an acknowledgement that does not land is shown so and can be sent again; a second
    fall of the resident the page answered is a new alarm (banner, sound); not worn is a fault call;
    the broker killed is a fault banner and tone within 5 s, and after its return the page and the
    real bridge are back within 5 s; the station killed is a fault banner on the page;
  - issue 37 item 2: a display (a second chromium started as a kiosk is, with
    --autoplay-policy=no-user-gesture-required, opened once at /display?key=…) and the member's
    page, both with sound on; the station killed and started again with an alarm raised while it
    was down: both show it and sound within 10 s of the start, nobody typing; the display
    acknowledges with a member's PIN (a wrong PIN refused), in that member's name;
  - issue 37 item 4: the accepted call on the display: "I'm here" and "Reset (done)" by PIN, the
    call closed, every step with its name in /incidents.csv; an alarm nobody accepts within
    escalation.accept-within (10 s) escalates: every page's louder tone and "ESCALATED" banner;
  - issue 37 item 5: a phone (390 x 844, then 360 x 740, mobile emulation): no sideways scroll,
    the acknowledge button inside the screen.
"""
import base64, json, os, shutil, sqlite3, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools/page-check"))
import care_home as ch   # noqa: E402
from cdp import Browser, BrowserError   # noqa: E402

BRIDGES = int(os.environ.get("BRIDGES", "200"))
OUT = os.environ.get("OUT") or os.path.join(ch.ROOT, "bench/out/station")
QUIET = 25.0
DISPLAY_KEY = "display-key-for-the-wall-0123"
KIOSK = ("--autoplay-policy=no-user-gesture-required",)
results = []


def check(ok, text):
    results.append(bool(ok))
    print(("PASS: " if ok else "FAIL: ") + text, flush=True)


def curl(url, *extra):
    r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5", *extra, url],
                       capture_output=True, text=True)
    return int(r.stdout or 0)


def fresh_broker(out):
    """An empty `out` and a mosquitto started in it: (port, broker)."""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out + "/broker")
    port = ch.free_port()
    broker = ch.Broker(out + "/broker", port)
    broker.start()
    return port, broker


def write_station_config(conf, port, web, more_staff, residents, rest):
    """A station's file (0600): the broker, the address, the bridges' secret, anna and
    `more_staff`, `residents` (YAML lines), then `rest`."""
    with open(conf, "w") as f:
        f.write(f"""station:
  broker: {{host: 127.0.0.1, port: {port}}}
  listen: 127.0.0.1:{web}
  acknowledge-secret: {ch.SECRET}
  staff:
    - {{user: anna, name: Anna Smith, password: anna-station-pw}}
{more_staff}  residents:
{residents}{rest}""")
    os.chmod(conf, 0o600)


def fmt(v):
    return f"{v:.2f}" if v is not None else "nan"


def wait_js(browser, expression, timeout):
    """Seconds until the expression holds in the page (None: not within timeout)."""
    start = time.time()
    try:
        browser.wait_for(expression, timeout, interval=0.05)
        return time.time() - start
    except BrowserError:
        return None


def pub(port, topic, payload, retain=True):
    subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-q", "1", *(["-r"] if retain else []),
                    "-t", topic, "-m", payload], check=True)


def incident(iid, kind, by=None):
    i = {"incident": iid, "kind": kind, "severity": "alarm", "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if by:
        i["acknowledged-by"] = by
    return json.dumps(i)


def faults_and_second_falls(browser, port, broker):
    """Issue 37: an acknowledgement that does not land, a resident's second fall on the page that
    answered the first, a fault call (not worn), and the broker killed and started again. room-005
    is a bridge as its messages (no process takes its acknowledgements)."""
    d = "room-005"
    row = f"document.querySelector('#alarms tr[data-device=\"{d}\"]')"
    button = f"document.querySelector('#alarms button[data-ack=\"{d}\"]')"
    in_banner = f"document.getElementById('banner').textContent.includes('{d}')"
    pub(port, f"fallguard/{d}/state", "alert-out")
    pub(port, f"fallguard/{d}/incident", incident("FG-1", "fall"))
    shown = wait_js(browser, f"{button} && {button}.dataset.state === 'new'", 10)
    browser.evaluate(f"{button}.click(); true")
    clicked = time.time()
    sent = wait_js(browser, f"{button} && {button}.dataset.state === 'sent' && !({in_banner})", 5)
    beeps = browser.evaluate("window.station.beeps")
    late = wait_js(browser, f"{button} && {button}.dataset.state === 'not-landed' && !{button}.disabled && ({in_banner})"
                            f" && window.station.beeps > {beeps}", 30)
    late = late and time.time() - clicked
    check(shown is not None and sent is not None and late is not None and 9 <= late <= 13,
          f"an acknowledgement that never lands (no bridge takes it): 'sent' then 'not landed, send again' {fmt(late)} s after "
          f"the click (timeout 10 s), the alarm back in the banner and sounding")
    browser.screenshot(OUT + "/station-not-landed.png")
    browser.evaluate(f"{button}.click(); true")
    again = wait_js(browser, f"{button} && {button}.dataset.state === 'sent'", 5)
    # The bridge takes it now; then the same resident falls again.
    pub(port, f"fallguard/{d}/incident", incident("FG-1", "acknowledged", by="Anna Smith (station)"))
    pub(port, f"fallguard/{d}/state", "monitoring")
    gone = wait_js(browser, f"!{row}", 5)
    check(again is not None and gone is not None, f"sent again ({fmt(again)} s), and once the bridge takes it the alarm leaves the list")
    beeps = browser.evaluate("window.station.beeps")
    pub(port, f"fallguard/{d}/state", "countdown")
    t = time.time()
    second = wait_js(browser, f"{row} && ({in_banner}) && window.station.beeps > {beeps} && "
                              f"{row}.querySelector('td.answered').textContent === 'nobody yet'", 10)
    second = second and time.time() - t
    pub(port, f"fallguard/{d}/state", "alert-out")
    pub(port, f"fallguard/{d}/incident", incident("FG-2", "fall"))
    fresh = wait_js(browser, f"{button} && {button}.dataset.state === 'new' && ({in_banner})", 10)
    check(second is not None and second <= 2 and fresh is not None,
          f"a second fall of the resident this page answered: banner and sound {fmt(second)} s after its countdown (bar 2 s), "
          f"nobody shown as answering it, and its alert a new one to acknowledge")
    browser.screenshot(OUT + "/station-second-fall.png")
    pub(port, f"fallguard/{d}/incident", incident("FG-2", "acknowledged", by="Anna Smith (station)"))
    pub(port, f"fallguard/{d}/state", "monitoring")

    # A fault call: not worn, then worn again.
    w = "room-002"
    tones = browser.evaluate("window.station.faultBeeps")
    pub(port, f"fallguard/{w}/worn", "not-worn")
    t = time.time()
    fault = wait_js(browser, f"document.getElementById('fault').dataset.faults.split(' ').includes('{w}:not-worn') && "
                             f"window.station.faultBeeps > {tones} && (() => {{ const rows = [...document.querySelectorAll('#bridges tr')];"
                             f" const i = rows.findIndex(r => r.dataset.device === '{w}');"
                             f" const quiet = rows.findIndex(r => !r.classList.contains('fault') && !r.classList.contains('alarm'));"
                             f" return i >= 0 && rows[i].classList.contains('fault') && (quiet < 0 || i < quiet) }})()", 10)
    fault = fault and time.time() - t
    pub(port, f"fallguard/{w}/worn", "worn")
    cleared = wait_js(browser, f"!document.getElementById('fault').dataset.faults.includes('{w}:')", 10)
    check(fault is not None and fault <= 2 and cleared is not None,
          f"not worn: a fault call (banner, fault tone, the row before every quiet one and marked) {fmt(fault)} s after the bridge said so, "
          f"cleared {fmt(cleared)} s after it is worn again")

    # The broker killed: the fault banner and tone; started again: every link back.
    tones = browser.evaluate("window.station.faultBeeps")
    broker.proc.kill()
    broker.proc.wait(10)
    killed = time.time()
    lost = wait_js(browser, "document.getElementById('fault').dataset.faults.split(' ').includes('link') && "
                            f"window.station.faultBeeps > {tones} && document.getElementById('link').dataset.connected === '0'", 15)
    lost = lost and time.time() - killed
    stale = browser.evaluate("document.querySelectorAll('#bridges tr.stale').length")
    check(lost is not None and lost <= 5 and stale >= BRIDGES,
          f"the broker killed: 'cannot see the bridges' banner and the fault tone {fmt(lost)} s later (bar 5 s); {stale} rows marked stale")
    browser.screenshot(OUT + "/station-broker-lost.png")
    time.sleep(max(0, 10 - (time.time() - killed)))   # a 10 s outage: every backoff at its maximum
    log = broker.folder + "/broker.log"
    seen = len(open(log, errors="replace").read())
    broker.start()
    restarted = time.time()
    back = wait_js(browser, "document.getElementById('link').dataset.connected === '1' && "
                            "!document.getElementById('fault').dataset.faults.split(' ').includes('link') && "
                            "document.querySelectorAll('#bridges tr.stale').length === 0", 15)
    back = back and time.time() - restarted

    def bridge_back():
        for line in open(log, errors="replace").read()[seen:].split("\n"):
            if "New client connected" in line and "fallguard-room-000" in line:
                return float(line.split(":", 1)[0])
        return None
    again = ch.wait_for(bridge_back, 15, 0.1)
    bridge = again - restarted if again else None
    check(back is not None and back <= 5 and bridge is not None and bridge <= 5,
          f"the broker back after a 10 s outage: the page sees the bridges again {fmt(back)} s later, the real bridge reconnected "
          f"{fmt(bridge)} s later (bar 5 s each, reconnect-delay-max 4 s)")


def restart_and_shown(pages, port, conf, restarted):
    """The station started again after an alarm was raised while it was down: seconds until each
    page shows it and sounds (sound running, beeps counting), per page name."""
    d = "room-007"
    pub(port, f"fallguard/{d}/state", "alert-out")
    pub(port, f"fallguard/{d}/incident", incident("FG-7", "fall"))
    beeps = {name: b.evaluate("window.station.beeps") for name, b in pages.items()}
    started = time.time()
    restarted.append(subprocess.Popen([ch.BIN, "station", "--config", conf], stdout=subprocess.DEVNULL,
                                      stderr=open(OUT + "/station-restarted.log", "w")))
    shown = {}
    deadline = started + 20
    while time.time() < deadline and len(shown) < len(pages):
        for name, b in pages.items():
            if name in shown:
                continue
            ok = b.evaluate(f"!!document.querySelector('#alarms button[data-ack=\"{d}\"]') && "
                            f"document.getElementById('banner').dataset.sounding === '1' && window.station.beeps > {beeps[name]} && "
                            "window.station.sound === 'running' && !/\\b(station|link|session)\\b/.test(document.getElementById('fault').dataset.faults)")
            if ok:
                shown[name] = time.time() - started
            b.pump(0.05)
    return d, shown


def restart_with_display(browser, wall, port, conf, restarted):
    """Issue 37 item 2: nobody types after a restart; the display acknowledges by PIN."""
    # Subscribed long before the display acknowledges (a subscription made just before can miss it).
    acks = ch.Subscriber(port, OUT + "/acks.tsv", topics=("fallguard/room-007/ack",))
    d, shown = restart_and_shown({"page": browser, "display": wall}, port, conf, restarted)
    typed = browser.evaluate("location.pathname") == "/" and wall.evaluate("location.pathname") == "/"
    check(len(shown) == 2 and max(shown.values()) <= 10 and typed,
          f"the station restarted with an alarm raised while it was down: the member's page shows it and sounds "
          f"{fmt(shown.get('page'))} s after the start, the display {fmt(shown.get('display'))} s (bar 10 s), nobody typing")
    wall.screenshot(OUT + "/station-display-after-restart.png")
    button = f"document.querySelector('#alarms button[data-ack=\"{d}\"]')"
    wall.evaluate(f"{button}.click(); document.getElementById('pin').value = '0000'; document.getElementById('pin-ok').click(); true")
    wrong = wait_js(wall, "document.getElementById('pin-error').textContent.includes('wrong PIN')", 5)
    wall.evaluate("document.getElementById('pin').value = '4711'; document.getElementById('pin-ok').click(); true")
    clicked = time.time()

    def by():
        for ts, t, r, p in acks.messages():
            if ts >= clicked and p:
                return json.loads(p).get("by")
        return None
    name = ch.wait_for(by, 10, 0.1)
    acks.stop()
    hidden = wall.evaluate("document.getElementById('pin-dialog').style.display")
    check(wrong is not None and name and "Bob Jones" in name and hidden == "none",
          f"on the display, a wrong PIN refused ('wrong PIN' shown), the right one acknowledges in its member's name: {name!r}")
    pub(port, f"fallguard/{d}/incident", incident("FG-7", "acknowledged", by=name or "someone"))
    pub(port, f"fallguard/{d}/state", "monitoring")
    # The call goes on at the bedside: I'm here, then reset, each by PIN on the display.
    call = f"document.querySelector('#calls tr[data-device=\"{d}\"]')"
    steps = []
    for which in ("presence", "reset"):
        b = f"document.querySelector('#calls button[data-step=\"{which}\"]')"
        shown = wait_js(wall, f"!!({call} && {b})", 10)
        if shown is not None:
            wall.evaluate(f"{b}.click(); document.getElementById('pin').value = '4711'; document.getElementById('pin-ok').click(); true")
        steps.append(shown)
    closed = wait_js(wall, f"!{call}", 10)
    csv = wall.evaluate("fetch('/incidents.csv').then(r => r.text())")
    row = next((line for line in csv.split("\r\n") if f",{d}," in line and "FG-7" in line), "")
    error = wall.evaluate("document.getElementById('pin-error').textContent")
    check(None not in steps and closed is not None and row.count(",Bob Jones,") == 3,
          f"the call on the display: I'm here and reset by PIN, closed; /incidents.csv keeps each step with its name: {row!r}"
          + (f" (steps shown after {steps}, closed {closed}, the PIN box said {error!r}; calls: "
             f"{wall.evaluate('document.getElementById(' + chr(39) + 'calls' + chr(39) + ').textContent')!r}, "
             f"{wall.evaluate('JSON.stringify(window.station)')}, {wall.console_errors[-3:]})" if closed is None else ""))
    wall.screenshot(OUT + "/station-display-call.png")


def escalation_and_phone(browser, wall, port, base):
    """An alarm nobody accepts escalates on every page (louder tone); the page on a phone."""
    d = "room-009"
    loud = {n: b.evaluate("window.station.loudBeeps") for n, b in (("page", browser), ("display", wall))}
    pub(port, f"fallguard/{d}/state", "alert-out")
    pub(port, f"fallguard/{d}/incident", incident("FG-9", "fall"))
    t = time.time()
    late = {}
    for n, b in (("page", browser), ("display", wall)):
        w = wait_js(b, f"document.getElementById('banner').dataset.escalated === '1' && "
                       f"document.getElementById('banner').textContent.includes('{d}: NOBODY ACCEPTED IT') && "
                       f"window.station.loudBeeps > {loud[n]}", 30)
        late[n] = w and time.time() - t
    check(all(v is not None and 9.5 <= v <= 14 for v in late.values()),
          f"an alarm nobody accepted in 10 s escalated: the louder tone and 'ESCALATED' on the member's page "
          f"{fmt(late['page'])} s and the display {fmt(late['display'])} s after it was raised (accept-within 10 s)")
    browser.screenshot(OUT + "/station-escalated.png")
    phone = Browser(width=390, height=844)
    try:
        phone.navigate(base + "/login")
        phone.events = [e for e in phone.events if e.get("method") != "Page.loadEventFired"]
        phone.evaluate("document.getElementById('user').value = 'bob'; document.getElementById('password').value = 'bob-station-pw';"
                       " document.querySelector('form').submit(); true")
        phone.wait_event("Page.loadEventFired", 15)
        fits = {}
        for w, h in ((390, 844), (360, 740)):
            phone.call("Emulation.setDeviceMetricsOverride", {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": True}, session=True)
            ok = wait_js(phone, f"(() => {{ const b = document.querySelector('#alarms button[data-ack=\"{d}\"]'); if (!b) return false;"
                                " const r = b.getBoundingClientRect();"
                                " return document.documentElement.scrollWidth <= window.innerWidth && r.left >= 0 && r.right <= window.innerWidth })()", 10)
            fits[w] = (phone.evaluate(f"(() => {{ const b = document.querySelector('#alarms button[data-ack=\"{d}\"]'); const r = b && b.getBoundingClientRect();"
                                      " return [document.documentElement.scrollWidth, window.innerWidth, r && Math.round(r.left), r && Math.round(r.right)] })()"),
                       ok is not None)
            shot = phone.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]   # the screen only
            with open(OUT + f"/station-phone-{w}.png", "wb") as f:
                f.write(base64.b64decode(shot))
        check(all(ok for _, ok in fits.values()),
              f"on a phone: [page width, screen width, the button's left and right] {', '.join(f'{w} px: {v[0]}' for w, v in fits.items())}; "
              f"no sideways scroll and the acknowledge button inside the screen")
    finally:
        phone.close()
    pub(port, f"fallguard/{d}/incident", incident("FG-9", "acknowledged", by="Anna Smith (station)"))
    pub(port, f"fallguard/{d}/state", "monitoring")


def main():
    port, broker = fresh_broker(OUT)
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
    write_station_config(conf, port, web, '    - {user: bob, name: Bob Jones, password: bob-station-pw, pin: "4711"}\n',
                         '    room-000: {wearer: Margaret, location: "Room 0, ground floor"}\n', f"""  state-directory: {OUT}/station-state
  display-key: {DISPLAY_KEY}
  escalation: {{accept-within: 10, presence-within: 1800}}
""")
    os.chmod(conf, 0o600)
    station = subprocess.Popen([ch.BIN, "station", "--config", conf], stdout=subprocess.DEVNULL,
                               stderr=open(OUT + "/station.log", "w"))
    restarted = []
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
        # Sound on, as a nurse's click does once.
        browser.evaluate("document.getElementById('sound').click(); true", user_gesture=True)
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
        faults_and_second_falls(browser, port, broker)
        wall = Browser(extra_args=KIOSK)
        wall.navigate(f"{base}/display?key={DISPLAY_KEY}")
        opened = wait_js(wall, "window.station && window.station.renders > 0 && document.body.dataset.display === '1' && "
                               "window.station.sound === 'running'", 15)
        check(opened is not None and curl(base + "/display?key=wrong-key-0123456789") == 401,
              f"a display opened once from its address (kiosk chromium): sound {wall.evaluate('window.station.sound')}; a wrong key 401")
        # The station's process gone: the page says so (its own watchdog), with the fault tone.
        tones = browser.evaluate("window.station.faultBeeps")
        station.kill()
        gone = time.time()
        said = wait_js(browser, "document.getElementById('fault').dataset.faults.split(' ').includes('station') && "
                                f"window.station.faultBeeps > {tones}", 15)
        check(said is not None and said <= 5, f"the station killed: the page's fault banner 'does not answer' and the fault tone "
                                              f"{fmt(said)} s later (bar 5 s)")
        browser.screenshot(OUT + "/station-gone.png")
        restart_with_display(browser, wall, port, conf, restarted)
        escalation_and_phone(browser, wall, port, base)
        wall.close()
    except BrowserError as e:
        check(False, f"browser: {e}")
    finally:
        if browser:
            browser.close()
        if bridge.proc:
            bridge.proc.terminate()
            bridge.proc.wait(20)
        for p in [station] + restarted:
            p.terminate()
            p.wait(20)
        sub.stop()
        broker.stop()
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
