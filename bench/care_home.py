#!/usr/bin/env python3
"""A care home of bridges on one real mosquitto (issue 30): N `fallguard run` processes (the
release build) replaying recordings, each with its own `device:`, state directory and MQTT
channel to one broker on loopback. Driven by bench/care-home.sh; prints every figure and ends
with PASS/FAIL lines and 'N passed, N failed'.

What it does, in order (times from the launch of the fall bridges, t0):
  1. starts the broker (persistent, so a restart keeps the retained messages) and a subscriber
     to fallguard/# and homeassistant/# that stamps every message;
  2. launches N-F quiet bridges, then the F fall bridges in one burst: their recording is still
     for QUIET s, then a real forward slip (the demo recording), still again, and a second slip;
  3. checks the retained messages: per bridge discovery, state and availability, and no two
     bridges sharing an id, a name or a topic (Home Assistant's unique ids, node ids, names,
     availability topics);
  4. fall 1, all F at once: every alert on the broker and in its bridge's outbox exactly once;
     latency from the end of the countdown (the alert's own monotonic time) to the broker;
  5. acknowledgements, all bridges sharing one acknowledge-secret (the worst case): each fall
     bridge first gets another bridge's valid HMAC ack on its own topic (must refuse), then
     only bridge 0 gets its own (only it acknowledges), then the others (each once);
  6. the broker stopped for OUTAGE s while fall 2 is raised: after the restart every bridge is
     back (a live `online`), and every fall-2 alert arrives, once;
  7. one bridge killed -9 and one stopped (SIGSTOP, as a hung or unplugged bridge): time to
     their `offline` (the kill: at once, the socket closes; the stop: keepalive x 1.5);
  8. RSS and CPU of every bridge and of the broker over a steady window.
"""
import hashlib, hmac, json, os, random, shutil, signal, socket, sqlite3, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N = int(os.environ.get("BRIDGES", "200"))
F = int(os.environ.get("FALLS", "20"))
QUIET = float(os.environ.get("QUIET", "30"))          # s of stillness before fall 1, after launch
OUTAGE = float(os.environ.get("OUTAGE", "30"))        # s the broker is down around fall 2
KEEPALIVE = int(os.environ.get("KEEPALIVE", "10"))    # the channel's keepalive (s)
COUNTDOWN = 5                                         # the shortest countdown allowed
# Every bridge retries 1, 2, 4 … s after a loss, up to reconnect-delay-max (60 s, the default here):
# the first try after a restart comes at most min(outage + 1, 60) s later; 5 s more for the crowd.
RECONNECT_BOUND = float(os.environ.get("RECONNECT_BOUND", str(min(OUTAGE + 1, 60) + 5)))
BIN = os.environ.get("FALLGUARD", os.path.join(ROOT, ".build/release/fallguard"))
OUT = os.environ.get("OUT") or os.path.join(ROOT, "bench/out/care-home")
SECRET = "care-home-shared-secret-0123456789"
# A build from before issue 30 took the MQTT name only from the channel: CHANNEL_DEVICE=1 adds it.
CHANNEL_EXTRA = ", device: {device}" if os.environ.get("CHANNEL_DEVICE") else ""
DEMO = os.path.join(ROOT, "Sources/FallGuardFieldTest/Resources/demo-fall.csv")

results = []  # (ok, text)

# A parent that blocks SIGTERM (a test runner) hands the mask down: unblock it, so that the
# broker, subscribers and bridges this script starts stop when told.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})


def check(ok, text):
    results.append((bool(ok), text))
    print(("PASS: " if ok else "FAIL: ") + text, flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def device(i):
    return f"room-{i:03d}"


# ---------------------------------------------------------------- recordings
def rest_rows(first, seconds, rng):
    x, y, z = first
    return [(x + rng.uniform(-0.003, 0.003), y + rng.uniform(-0.003, 0.003), z + rng.uniform(-0.003, 0.003))
            for _ in range(int(seconds * 40))]


def write_recordings(folder, gap):
    rows = [tuple(float(v) for v in line.split(",")) for line in open(DEMO).read().split("\n")[1:] if line.strip()]
    rng = random.Random(30)
    quiet = rest_rows(rows[0], 2, rng)
    fall = rest_rows(rows[0], QUIET, rng) + rows + rest_rows(rows[-1], gap, rng) + rows
    paths = {}
    for name, data in (("quiet", quiet), ("fall", fall)):
        paths[name] = os.path.join(folder, name + ".csv")
        with open(paths[name], "w") as f:
            f.write("x_g,y_g,z_g\n" + "".join(f"{x:.4f},{y:.4f},{z:.4f}\n" for x, y, z in data))
    return paths


# ---------------------------------------------------------------- broker and subscriber
class Broker:
    def __init__(self, folder, port):
        self.folder, self.port, self.proc = folder, port, None
        with open(folder + "/mosquitto.conf", "w") as f:
            f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence true\n"
                    f"persistence_location {folder}/\nautosave_interval 1\nmax_queued_messages 10000\n"
                    f"log_dest file {folder}/broker.log\nlog_type error\nlog_type warning\nlog_type notice\n"
                    f"log_timestamp_format %s\nuser root\n")

    def start(self):
        self.proc = subprocess.Popen(["mosquitto", "-c", self.folder + "/mosquitto.conf"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.02)
        raise SystemExit("the broker did not start")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


class Subscriber:
    """mosquitto_sub, every message stamped on arrival (Unix time, ns)."""
    def __init__(self, port, path, topics=("fallguard/#", "homeassistant/#"), extra=()):
        self.path = path
        self.proc = subprocess.Popen(
            ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-q", "1", "-i", "bench-" + os.path.basename(path),
             "-F", "%U\t%t\t%r\t%p", *extra] + [a for t in topics for a in ("-t", t)],
            stdout=open(path, "w"), stderr=subprocess.DEVNULL)

    def messages(self):
        out = []
        for line in open(self.path, errors="replace"):
            parts = line.rstrip("\n").split("\t", 3)
            if len(parts) == 4:
                out.append((float(parts[0]), parts[1], parts[2] == "1", parts[3]))
        return out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def retained(port, seconds=4):
    p = subprocess.run(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "--retained-only", "-W", str(seconds),
                        "-F", "%t\t%p", "-t", "fallguard/#", "-t", "homeassistant/#"], capture_output=True, text=True)
    found = {}
    for line in p.stdout.split("\n"):
        if "\t" in line:
            topic, payload = line.split("\t", 1)
            found[topic] = payload
    return found


def publish(port, topic, payload):
    subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-q", "1", "-t", topic, "-m", payload], check=True)


# ---------------------------------------------------------------- bridges
POLICY = "\n".join(f"  {k}: {{primary: [], others: [], broadcast: [mqtt]}}"
                   for k in ("fall", "help-requested", "resolved", "device-problem", "heartbeat"))


def write_config(folder, i, recording, port):
    state = f"{folder}/state"
    os.makedirs(state, mode=0o700, exist_ok=True)
    path = f"{folder}/config.yaml"
    with open(path, "w") as f:
        f.write(f"""device: {device(i)}
sensor: {{replay: "{recording}", cpu: any}}
gpio: {{enabled: false}}
alarm: {{countdown: {COUNTDOWN}, final-phase: 2}}
state: {{directory: "{state}"}}
metrics: {{enabled: false}}
recording: {{enabled: false}}
log: {{level: notice}}
wearer: {{name: Resident {i}, location: Room {i}}}
channels:
  mqtt: {{type: mqtt, host: 127.0.0.1, port: {port}, keepalive: {KEEPALIVE}, acknowledge-secret: {SECRET}{CHANNEL_EXTRA.format(device=device(i))}}}
policy:
{POLICY}
""")
    os.chmod(path, 0o600)
    return path, state


class Bridge:
    def __init__(self, i, folder, recording, port):
        self.i, self.name = i, device(i)
        os.makedirs(folder, exist_ok=True)
        self.config, self.state = write_config(folder, i, recording, port)
        self.log = open(folder + "/stderr.log", "w")
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([BIN, "run", "--config", self.config], stdout=subprocess.DEVNULL, stderr=self.log)
        self.started = time.time()

    def outbox(self, sql):
        db = sqlite3.connect(f"file:{self.state}/outbox.sqlite?mode=ro", uri=True, timeout=10)
        try:
            return db.execute(sql).fetchall()
        finally:
            db.close()


def proc_stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return ticks, rss


def pct(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def wait_for(predicate, timeout, step=0.2):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()


def ack_payload(dev, incident, by):
    now = int(time.time())
    # fallguard-ack-2: the name is signed too, so the bridge attributes the acknowledgement to it
    mac = hmac.new(SECRET.encode(), f"fallguard-ack-2\n{dev}\n{incident}\n{now}\n{by}".encode(), hashlib.sha256).hexdigest()
    return json.dumps({"incident": incident, "by": by, "time": now, "hmac": mac})


def main():
    if not os.access(BIN, os.X_OK):
        raise SystemExit(f"{BIN} missing: tools/build-release fallguard")
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    print(f"care home: {N} bridges ({F} with falls), one mosquitto, keepalive {KEEPALIVE} s, countdown {COUNTDOWN} s, "
          f"outage {OUTAGE:.0f} s; {os.cpu_count()} CPUs; output in {OUT}", flush=True)
    # Fall 2's impact: t0 + QUIET + 15 s (fall 1) + gap + its impact; the broker is down around it.
    gap = 60.0
    recs = write_recordings(OUT, gap)
    port = free_port()
    os.makedirs(OUT + "/broker")
    broker = Broker(OUT + "/broker", port)
    broker.start()
    sub = Subscriber(port, OUT + "/messages-1.tsv")
    time.sleep(0.5)
    mono_offset = time.time() - time.monotonic()   # Unix time of the monotonic clock's zero
    bridges = [Bridge(i, f"{OUT}/b{i:03d}", recs["fall" if i < F else "quiet"], port) for i in range(N)]
    quiet, falls = bridges[F:], bridges[:F]

    # ---- launch: the quiet ones in groups, then the fall ones in one burst
    launch = time.time()
    for k, b in enumerate(quiet):
        b.start()
        if k % 20 == 19:
            time.sleep(0.5)

    def online(msgs, since=0.0):
        return {t.split("/")[1] for (ts, t, r, p) in msgs if t.endswith("/availability") and p == "online" and ts >= since}
    got = wait_for(lambda: len(online(sub.messages())) >= len(quiet), 120)
    t0 = time.time()
    for b in falls:
        b.start()
    print(f"launch: {len(quiet)} quiet bridges online {t0 - launch:.1f} s after the first start; {F} fall bridges started within "
          f"{max(b.started for b in falls) - t0:.3f} s", flush=True)
    all_online = wait_for(lambda: len(online(sub.messages())) >= N, 60)
    msgs = sub.messages()
    first_online = {}
    for ts, t, r, p in msgs:
        if t.endswith("/availability") and p == "online":
            first_online.setdefault(t.split("/")[1], ts)
    starts = [first_online[b.name] - b.started for b in bridges if b.name in first_online]
    check(len(online(msgs)) == N, f"all bridges online: {len(online(msgs))} of {N}; start → online p50 {pct(starts, 50):.2f} s, "
                                  f"max {max(starts):.2f} s")

    # ---- retained: discovery, state, availability, distinct
    time.sleep(3)
    ret = retained(port)
    per = {b.name: {} for b in bridges}
    uids, names, nodes, avail = {}, {}, {}, {}
    stray = []
    for topic, payload in ret.items():
        parts = topic.split("/")
        if parts[0] == "fallguard" and len(parts) == 3:
            if parts[1] in per:
                per[parts[1]][parts[2]] = payload
            else:
                stray.append(topic)
        elif parts[0] == "homeassistant" and len(parts) == 5:
            node = parts[2]
            try:
                cfg = json.loads(payload)
            except ValueError:
                stray.append(topic)
                continue
            uids.setdefault(cfg.get("unique_id"), []).append(topic)
            dev = cfg.get("device", {})
            names.setdefault(dev.get("name"), set()).add(node)
            nodes.setdefault(tuple(dev.get("identifiers", [])), set()).add(node)
            avail.setdefault(cfg.get("availability_topic"), set()).add(node)
    complete = [d for d, t in per.items() if t.get("availability") == "online" and t.get("state") == "monitoring"]
    check(len(complete) == N and not stray, f"retained availability 'online' and state 'monitoring' for {len(complete)} of {N} "
                                            f"bridges, {len(stray)} topics of no bridge")
    dup_uids = [u for u, ts in uids.items() if len(ts) > 1]
    entities = {}
    for u, ts in uids.items():
        for t in ts:
            entities[t.split("/")[2]] = entities.get(t.split("/")[2], 0) + 1
    check(len(entities) == N and len(set(entities.values())) == 1 and not dup_uids,
          f"Home Assistant discovery: {len(uids)} unique ids, {len(entities)} bridges with {sorted(set(entities.values()))} entities "
          f"each, {len(dup_uids)} ids shared")
    check(len(names) == N and all(len(v) == 1 for v in names.values()), f"Home Assistant device names: {len(names)} distinct, each one node")
    check(len(avail) == N and all(len(v) == 1 for v in avail.values())
          and all(a == f"fallguard/{list(v)[0].removeprefix('fallguard_')}/availability" for a, v in avail.items()),
          f"availability topics: {len(avail)} distinct, each its own bridge's")
    check(len(nodes) == N, f"device identifiers: {len(nodes)} distinct")

    # ---- steady-state cost (while everyone monitors), before the falls
    pids = {b.name: b.proc.pid for b in bridges}
    before = {n: proc_stat(p) for n, p in pids.items()}
    broker_before = proc_stat(broker.proc.pid)
    window_start = time.time()
    window = max(5.0, min(20.0, t0 + QUIET - 4 - time.time()))
    time.sleep(window)
    elapsed = time.time() - window_start
    after = {n: proc_stat(p) for n, p in pids.items()}
    broker_after = proc_stat(broker.proc.pid)
    hz = os.sysconf("SC_CLK_TCK")
    cpu = [(after[n][0] - before[n][0]) / hz / elapsed * 100 for n in pids]
    rss = [after[n][1] / 1024 for n in pids]
    bcpu = (broker_after[0] - broker_before[0]) / hz / elapsed * 100
    print(f"cost over {elapsed:.0f} s of monitoring: per bridge RSS p50 {pct(rss, 50):.1f} MiB, max {max(rss):.1f} MiB, "
          f"total {sum(rss) / 1024:.2f} GiB; CPU p50 {pct(cpu, 50):.2f} %, max {max(cpu):.2f} % of one core, all bridges "
          f"{sum(cpu):.1f} % ({sum(cpu) / os.cpu_count():.1f} % of the machine); broker RSS {broker_after[1] / 1024:.1f} MiB, "
          f"CPU {bcpu:.2f} %", flush=True)
    cost = dict(rss_p50=pct(rss, 50), rss_max=max(rss), cpu_p50=pct(cpu, 50), cpu_max=max(cpu), cpu_total=sum(cpu),
                broker_rss=broker_after[1] / 1024, broker_cpu=bcpu)

    # ---- fall 1: every alert once, latency
    def alerts(msgs, kind):
        out = []
        for ts, t, r, p in msgs:
            if t.endswith("/alert"):
                try:
                    a = json.loads(p)
                except ValueError:
                    continue
                if a["alert"]["kind"] == kind:
                    out.append((ts, t.split("/")[1], a))
        return out
    wait_for(lambda: len(alerts(sub.messages(), "fall")) >= F, QUIET + 60)
    time.sleep(3)
    fall1 = alerts(sub.messages(), "fall")
    by_dev = {}
    for ts, dev, a in fall1:
        by_dev.setdefault(dev, []).append((ts, a))
    keys = [a["idempotencyKey"] for _, _, a in fall1]
    once = [b.name for b in falls if len(by_dev.get(b.name, [])) == 1]
    wrong = sorted(set(by_dev) - {b.name for b in falls})
    check(len(once) == F and not wrong and len(keys) == len(set(keys)),
          f"fall 1: alerts on the broker exactly once: {len(once)} of {F}; from bridges without a fall: {len(wrong)}; "
          f"duplicated keys: {len(keys) - len(set(keys))}")
    outbox_once = 0
    for b in falls:
        rows = b.outbox("SELECT d.state, count(*) FROM delivery d JOIN alert a ON a.id = d.alert_id WHERE a.kind = 'fall' GROUP BY d.state")
        outbox_once += rows == [("sent", 1)]
    check(outbox_once == F, f"fall 1: in each bridge's outbox exactly one fall delivery, sent: {outbox_once} of {F}")
    # The alert's time is the engine's CLOCK_MONOTONIC at the end of the countdown; the impact is
    # stream time on the same clock (the replay stamps each sample with the time it was due).
    lat = [ts - (a["alert"]["time"] + mono_offset) for ts, _, a in fall1 if a["idempotencyKey"]]
    imp = [ts - (a["alert"]["fall"]["impactTime"] + mono_offset) for ts, _, a in fall1 if a["alert"].get("fall")]
    spread = max(a["alert"]["time"] for _, _, a in fall1) - min(a["alert"]["time"] for _, _, a in fall1) if fall1 else 0
    print(f"fall 1 latency, alert raised (end of the {COUNTDOWN} s countdown) → broker: p50 {pct(lat, 50) * 1000:.0f} ms, "
          f"p95 {pct(lat, 95) * 1000:.0f} ms, max {max(lat) * 1000:.0f} ms (n={len(lat)}, raised within {spread:.2f} s of each other)",
          flush=True)
    print(f"fall 1 latency, impact → broker (detection + {COUNTDOWN} s countdown + delivery): p50 {pct(imp, 50):.2f} s, "
          f"p95 {pct(imp, 95):.2f} s, max {max(imp):.2f} s", flush=True)
    latency = dict(p50=pct(lat, 50), p95=pct(lat, 95), max=max(lat))

    # ---- acknowledgements: one secret shared by every bridge, each ack bound to its bridge
    incidents = {dev: v[0][1]["alert"]["incident"] for dev, v in by_dev.items()}
    def acked(msgs):
        return {t.split("/")[1]: a for ts, t, a in ((x[0], x[1], json.loads(x[3])) for x in msgs if x[1].endswith("/incident"))
                if a.get("kind") == "acknowledged"}
    # (a) another bridge's valid ack on each fall bridge's topic
    for k, b in enumerate(falls):
        other = falls[(k + 1) % F]
        publish(port, f"fallguard/{b.name}/ack", ack_payload(other.name, incidents.get(other.name, "FG-1"), f"Mallory for {other.name}"))
    time.sleep(4)
    taken = acked(sub.messages())
    check(not taken, f"acks replayed onto another bridge's topic (same secret, same incident id): taken by {len(taken)} of {F}")
    # (b) only bridge 0's own
    publish(port, f"fallguard/{falls[0].name}/ack", ack_payload(falls[0].name, incidents.get(falls[0].name, "FG-1"), "Nurse 0"))
    wait_for(lambda: acked(sub.messages()), 10)
    time.sleep(2)
    taken = acked(sub.messages())
    check(set(taken) == {falls[0].name}, f"an ack for {falls[0].name} only: acknowledged by {sorted(taken)}")
    # (c) the others, each its own
    for b in falls[1:]:
        publish(port, f"fallguard/{b.name}/ack", ack_payload(b.name, incidents.get(b.name, "FG-1"), f"Nurse {b.i}"))
    wait_for(lambda: len(acked(sub.messages())) >= F, 15)
    time.sleep(2)
    msgs = sub.messages()
    taken = acked(msgs)
    ack_alerts = alerts(msgs, "acknowledged")
    per_ack = {}
    for _, dev, a in ack_alerts:
        per_ack[dev] = per_ack.get(dev, 0) + 1
    check(set(taken) == {b.name for b in falls} and all(per_ack.get(b.name) == 1 for b in falls) and len(per_ack) == F,
          f"every fall bridge acknowledged by its own ack, once: {sum(1 for b in falls if per_ack.get(b.name) == 1)} of {F}; "
          f"'acknowledged' alerts from {len(per_ack)} bridges")

    # ---- fall 2 with the broker down: nothing lost, everyone back
    impact1 = {dev: v[0][1]["alert"]["fall"]["impactTime"] for dev, v in by_dev.items()}
    # the second slip's impact is 15 s (the demo) + gap after the first's, on the stream clock
    impact2 = min(impact1.values()) + 15 + gap + mono_offset if impact1 else t0 + QUIET + 15 + gap + 5
    # centred on when fall 2's alerts are raised (impact + detection + countdown, as fall 1's were)
    raise_delay = statistics.median(a["alert"]["time"] - a["alert"]["fall"]["impactTime"] for _, _, a in fall1) if fall1 else 7.5
    down_at = impact2 + raise_delay - OUTAGE / 2
    if time.time() > down_at:
        print(f"note: late for the planned outage by {time.time() - down_at:.1f} s", flush=True)
    time.sleep(max(0, down_at - time.time()))
    sub.stop()
    broker.stop()
    stopped = time.time()
    time.sleep(max(0, stopped + OUTAGE - time.time()))
    broker.start()
    restarted = time.time()
    sub2 = Subscriber(port, OUT + "/messages-2.tsv")
    print(f"broker down {restarted - stopped:.1f} s (fall 2 impacts at {impact2 - stopped:.1f} s into it)", flush=True)

    def live_online(msgs):
        return {t.split("/")[1]: ts for ts, t, r, p in msgs if t.endswith("/availability") and p == "online" and not r}
    back = wait_for(lambda: len(live_online(sub2.messages())) >= N, RECONNECT_BOUND + 30)
    msgs = sub2.messages()
    lo = live_online(msgs)
    times = [ts - restarted for ts in lo.values()]
    check(len(lo) == N and times and max(times) <= RECONNECT_BOUND,
          f"broker restarted: {len(lo)} of {N} bridges back (live 'online') — p50 {pct(times, 50):.1f} s, max "
          f"{max(times) if times else float('nan'):.1f} s after the restart (bound {RECONNECT_BOUND:.0f} s)")
    wait_for(lambda: len(alerts(sub2.messages(), "fall")) >= F, 60)
    time.sleep(5)
    msgs = sub2.messages()
    fall2 = alerts(msgs, "fall")
    per2 = {}
    for ts, dev, a in fall2:
        per2.setdefault(dev, []).append(a)
    once2 = [b.name for b in falls if len(per2.get(b.name, [])) == 1 and per2[b.name][0]["alert"]["incident"] != incidents.get(b.name)]
    raised_down = [a for v in per2.values() for a in v if stopped <= a["alert"]["time"] + mono_offset <= restarted]
    check(len(once2) == F and set(per2) <= {b.name for b in falls},
          f"fall 2, raised while the broker was down ({len(raised_down)} of them within the outage): on the broker exactly once "
          f"after it came back: {len(once2)} of {F}")
    outbox2 = sum(1 for b in falls if b.outbox(
        "SELECT count(*) FROM delivery d JOIN alert a ON a.id = d.alert_id WHERE a.kind = 'fall' AND d.state = 'sent'") == [(2,)])
    check(outbox2 == F, f"outboxes: two fall deliveries sent, one per fall: {outbox2} of {F}")
    ret2 = retained(port)
    kept = sum(1 for b in bridges if ret2.get(f"fallguard/{b.name}/availability") == "online"
               and f"homeassistant/binary_sensor/fallguard_{b.name}/fall/config" in ret2)
    check(kept == N, f"after the restart: availability and discovery retained for {kept} of {N}")

    # ---- a bridge killed -9, another stopped (hung): offline within the keepalive bound
    victim, hung = quiet[0], quiet[1]
    killed = time.time()
    victim.proc.kill()
    os.kill(hung.proc.pid, signal.SIGSTOP)

    def offline(name):
        return next((ts for ts, t, r, p in sub2.messages() if t == f"fallguard/{name}/availability" and p == "offline"
                     and ts >= killed), None)
    # The broker drops a silent client 1.5 x keepalive after its last packet, and mosquitto 2
    # looks for such clients every 5 s (src/keepalive.c): 1.5 x keepalive + 5 s at most.
    bound = KEEPALIVE * 1.5 + 5
    wait_for(lambda: offline(victim.name) and offline(hung.name), bound + 10)
    k_off, h_off = offline(victim.name), offline(hung.name)
    os.kill(hung.proc.pid, signal.SIGCONT)
    check(k_off is not None and k_off - killed <= bound,
          f"killed -9: {victim.name} 'offline' after {(k_off - killed) if k_off else float('nan'):.2f} s (the socket closes: "
          f"the will at once; bound {bound:.0f} s)")
    check(h_off is not None and h_off - killed <= bound,
          f"stopped (hung, no keepalive): {hung.name} 'offline' after {(h_off - killed) if h_off else float('nan'):.1f} s "
          f"(bound {KEEPALIVE * 1.5:.0f} s + the broker's 5 s check)")
    others_off = {t for ts, t, r, p in sub2.messages() if t.endswith("/availability") and p == "offline" and ts >= killed} \
        - {f"fallguard/{victim.name}/availability", f"fallguard/{hung.name}/availability"}
    check(not others_off, f"no other bridge went offline: {len(others_off)}")

    # ---- stop
    sub2.stop()
    for b in bridges:
        if b.proc.poll() is None:
            b.proc.terminate()
    for b in bridges:
        try:
            b.proc.wait(20)
        except subprocess.TimeoutExpired:
            b.proc.kill()
    broker.stop()
    crashed = [b.name for b in bridges if b is not victim and b.proc.returncode not in (0, -signal.SIGTERM)]
    check(not crashed, f"bridges that exited with an error: {crashed}")
    summary = dict(bridges=N, falls=F, fall1_once=len(once), fall1_outbox=outbox_once, latency_ms={k: round(v * 1000) for k, v in latency.items()},
                   reconnect_p50=pct(times, 50), reconnect_max=max(times) if times else None, fall2_once=len(once2),
                   kill_offline=(k_off - killed) if k_off else None, hung_offline=(h_off - killed) if h_off else None, **cost)
    with open(OUT + "/summary.json", "w") as f:
        json.dump(summary, f, indent=1)
    passed = sum(ok for ok, _ in results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
