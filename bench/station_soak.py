#!/usr/bin/env python3
"""Issue 37's scale bar for the staff station: 200 bridges, station memory <= 64 MB over 30
minutes, an alarm on screen <= 2 s. Driven by bench/station-soak.sh.

BRIDGES (200) simulated bridges, each its own MQTT connection to a real mosquitto with a
bridge's retained will (`availability` offline), publishing what a bridge publishes: retained
availability, state and worn, a heartbeat alert every HEARTBEAT (60) s, pings. Every ALARM_EVERY
(60) s one bridge falls (state countdown; 5 s later alert-out, its incident and alert), a signed-in
member's page in headless chromium shows it (measured: the publish of `countdown` -> the row in
the page, and `alert-out` -> the acknowledge button), then the bridge is acknowledged and back to
monitoring. Every 10th alarm one bridge goes offline (its connection dropped: the will) and
comes back. The station's RSS (VmRSS of its process) is sampled every 5 s for MINUTES (30).
Prints the figures and PASS/FAIL: max RSS <= 64 MiB; every alarm on screen <= 2 s.
"""
import json, os, random, socket, struct, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools/page-check"))
import care_home as ch   # noqa: E402
from cdp import Browser, BrowserError   # noqa: E402
from station_check import fresh_broker, write_station_config   # noqa: E402

BRIDGES = int(os.environ.get("BRIDGES", "200"))
MINUTES = float(os.environ.get("MINUTES", "30"))
ALARM_EVERY = float(os.environ.get("ALARM_EVERY", "60"))
HEARTBEAT = float(os.environ.get("HEARTBEAT", "60"))
OUT = os.environ.get("OUT") or os.path.join(ch.ROOT, "bench/out/station-soak")
BAR_MB = 64.0


def utf(s):
    b = s.encode()
    return struct.pack("!H", len(b)) + b


def packet(first, body):
    n, length = len(body), b""
    while True:
        d, n = n % 128, n // 128
        length += bytes([d | (0x80 if n else 0)])
        if not n:
            return bytes([first]) + length + body


class FakeBridge:
    """One bridge's MQTT 3.1.1 connection (QoS 0), its will retained `offline`."""
    def __init__(self, port, device):
        self.port, self.device, self.sock = port, device, None

    def connect(self):
        self.sock = socket.create_connection(("127.0.0.1", self.port), 5)
        will = f"fallguard/{self.device}/availability"
        body = utf("MQTT") + bytes([4, 0x02 | 0x04 | 0x20]) + struct.pack("!H", 30) + utf("fallguard-" + self.device) + utf(will) + utf("offline")
        self.sock.sendall(packet(0x10, body))
        if self.sock.recv(4)[:1] != b"\x20":
            raise SystemExit(f"{self.device}: no CONNACK")
        self.sock.setblocking(False)
        self.pub("availability", "online")

    def pub(self, topic, payload, retain=True):
        body = utf(f"fallguard/{self.device}/{topic}") + payload.encode()
        self.sock.sendall(packet(0x31 if retain else 0x30, body))

    def ping(self):
        self.sock.sendall(b"\xc0\x00")
        try:
            while self.sock.recv(4096):
                pass
        except BlockingIOError:
            pass

    def drop(self):   # gone without a word: the broker publishes the will
        self.sock.close()


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main():
    port, broker = fresh_broker(OUT)
    web = ch.free_port()
    conf = OUT + "/station.yaml"
    residents = "".join(f"    {ch.device(i)}: {{wearer: Resident {i}, location: \"Room {i}\", floor: floor-{i // 50}}}\n" for i in range(BRIDGES))
    write_station_config(conf, port, web, "", residents, f"""  state-directory: {OUT}/station-state
  escalation: {{accept-within: 3600, presence-within: 7200}}
""")
    station = subprocess.Popen([ch.BIN, "station", "--config", conf], stdout=subprocess.DEVNULL,
                               stderr=open(OUT + "/station.log", "w"))
    base = f"http://127.0.0.1:{web}"
    bridges = [FakeBridge(port, ch.device(i)) for i in range(BRIDGES)]
    rng = random.Random(37)
    samples, shown, buttons, fails = [], [], [], []
    browser = None
    try:
        for b in bridges:
            b.connect()
            b.pub("state", "monitoring")
            b.pub("worn", "worn")
        def listening():
            try:
                socket.create_connection(("127.0.0.1", web), 1).close()
                return True
            except OSError:
                return False
        if not ch.wait_for(listening, 30):
            raise SystemExit("the station did not start: " + open(OUT + "/station.log").read())
        browser = Browser()
        browser.navigate(base + "/")
        browser.wait_for("document.querySelector('input[name=password]') !== null", 15)
        browser.evaluate("document.getElementById('user').value = 'anna'; document.getElementById('password').value = 'anna-station-pw';"
                         " document.querySelector('form').submit(); true")
        browser.wait_for(f"window.station && document.querySelectorAll('#bridges tr').length >= {BRIDGES}", 60)
        start = time.time()
        end = start + MINUTES * 60
        next_ping = next_sample = next_alarm = start
        next_beat = {b.device: start + rng.uniform(0, HEARTBEAT) for b in bridges}
        n = 0
        while time.time() < end:
            now = time.time()
            if now >= next_sample:
                samples.append((now - start, rss_kib(station.pid)))
                next_sample += 5
            if now >= next_ping:
                for b in bridges:
                    b.ping()
                next_ping += 15
            for b in bridges:
                if now >= next_beat[b.device]:
                    b.pub("alert", json.dumps({"device": b.device, "wearer": {"name": "x"}, "sentAt": iso(now),
                                               "alert": {"kind": "heartbeat", "incident": "heartbeat"}}), retain=False)
                    next_beat[b.device] += HEARTBEAT
            if now >= next_alarm:
                n += 1
                b = bridges[rng.randrange(BRIDGES)]
                sel = f"#alarms tr[data-device=\"{b.device}\"]"
                incident = f"FG-{n}"
                t0 = time.time()
                b.pub("state", "countdown")
                row = browser.wait_for(f"!!document.querySelector('{sel}')", 10, interval=0.05) and time.time() - t0
                browser.pump(max(0, 5 - (time.time() - t0)))
                t1 = time.time()
                b.pub("state", "alert-out")
                b.pub("incident", json.dumps({"incident": incident, "kind": "fall", "severity": "alarm", "at": iso(t1)}))
                b.pub("alert", json.dumps({"device": b.device, "wearer": {"name": "x"}, "sentAt": iso(t1),
                                           "alert": {"kind": "fall", "incident": incident}}), retain=False)
                button = browser.wait_for(f"!!document.querySelector('{sel} button[data-ack]')", 10, interval=0.05) and time.time() - t1
                shown.append(row)
                buttons.append(button)
                if not (row and row <= 2 and button and button <= 2):
                    fails.append((n, b.device, row, button))
                b.pub("incident", json.dumps({"incident": incident, "kind": "acknowledged", "severity": "information",
                                              "at": iso(time.time()), "acknowledged-by": "Soak (station)"}))
                b.pub("state", "monitoring")
                if n % 10 == 0:   # one bridge offline and back
                    o = bridges[rng.randrange(BRIDGES)]
                    o.drop()
                    time.sleep(1)
                    o.connect()
                next_alarm += ALARM_EVERY
            browser.pump(0.2)
            if station.poll() is not None:
                raise SystemExit("the station stopped: " + open(OUT + "/station.log").read()[-2000:])
        samples.append((time.time() - start, rss_kib(station.pid)))
    except BrowserError as e:
        print(f"FAIL: browser: {e}")
        fails.append(("browser", str(e)))
    finally:
        if browser:
            browser.close()
        station.terminate()
        station.wait(20)
        broker.stop()
    with open(OUT + "/rss.tsv", "w") as f:
        f.write("".join(f"{t:.0f}\t{k}\n" for t, k in samples))
    mib = [k / 1024 for _, k in samples]
    first = [k for t, k in samples if t >= 60][:1] or [samples[0][1]]
    peak = max(mib) if mib else float("nan")
    ok_rows = [v for v in shown if v]
    ok_buttons = [v for v in buttons if v]
    print(f"{len(samples)} RSS samples over {samples[-1][0] / 60:.1f} min: start {mib[0]:.1f} MiB, after 1 min {first[0] / 1024:.1f} MiB, "
          f"end {mib[-1]:.1f} MiB, max {peak:.1f} MiB")
    print(f"{len(shown)} alarms: on screen (countdown -> row) p50 {ch.pct(ok_rows, 50):.2f} s, max {max(ok_rows, default=float('nan')):.2f} s; "
          f"acknowledge button (alert-out -> button) p50 {ch.pct(ok_buttons, 50):.2f} s, max {max(ok_buttons, default=float('nan')):.2f} s")
    checks = [(peak <= BAR_MB, f"station RSS max {peak:.1f} MiB over {MINUTES:g} min with {BRIDGES} bridges (bar {BAR_MB:g} MiB)"),
              (not fails and shown, f"every alarm on screen within 2 s ({len(shown) - len(fails)} of {len(shown)}; late: {fails[:5]})")]
    for ok, text in checks:
        print(("PASS: " if ok else "FAIL: ") + text)
    return 0 if all(ok for ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
