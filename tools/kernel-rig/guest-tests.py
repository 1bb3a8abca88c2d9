#!/usr/bin/env python3
"""FallGuard's own commands against the real drivers, run INSIDE the guest after
guest-setup.sh (one boot runs them all):

    tools/kernel-rig/run-guest.sh 6.12 -- tools/kernel-rig/guest-tests.py [--only NAME,...]

Checks (each prints PASS/FAIL lines; figures go to $FG_RIG_OUT/<krel>/figures.jsonl):
  devices   `fallguard devices --json` against the drivers' sysfs attributes
  adxl345   `fallguard watch --polled --arrival-log` and `fallguard record` at once, on the
            real adxl345 fed by feeder.py from demo-fall.csv at the rate the driver reports
  mpu6050   buffered: `fallguard watch --rate 100 --arrival-log` while feeder.py fires one
            interrupt per sample (lock-step on the driver's FIFO read), FG_RIG_MPU_SAMPLES
            samples (default 2000); then `fallguard record` at 40 Hz. Six axes: a six-axis
            recording (SIXAXIS) feeds the accelerometer and the gyroscope registers and FIFO
            datum; the angular velocity fallguard reads must be the fed counts exactly
  gpio      `fallguard gpio` with libgpiod 1.6 and 2.x: pattern in gpio-sim's value, a press
            through pull seen with its edge, lines released on exit
  run       `fallguard run` (libgpiod 1.6 and 2.x): a real fall fed to the adxl345 sounds the
            buzzer and counts down, a press through gpio-sim aborts it; in the last run
            (2.x) the adxl345 driver is then unbound and bound again: a sensor fault, then
            recovery
  power     `fallguard run` on the real test_power (built from the kernel's source): nothing
            claimed before the module; battery 15 % -> battery low once; mains offline > 3 s ->
            on battery; online -> mains back (issue 36)
  clock     (only with --only clock, alone: see OPT_IN) `fallguard run` while `date -s` steps the guest's wall clock +3 days and -1 h in a
            countdown and in the retry of its alert: lengths kept, the alert once (issue 36)
  dump      (first: the devices as probed) dump-attrs.py iio and gpio into $FG_RIG_OUT, for
            diff-dumps.py against the emulators

Environment: FALLGUARD_BIN (default /work/main/.build/debug/fallguard relative to the
repository), FG_RIG_OUT (results; default /tmp/fg-rig-out), FG_RIG_LIBS (v1,v2),
FG_RIG_MPU_SAMPLES, FG_RIG_ONLY.
Exit 0 when every check passed.
"""
import glob
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time

RIG = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(RIG))
FG = os.environ.get("FALLGUARD_BIN") or os.path.join(REPO, ".build/debug/fallguard")
KREL = os.uname().release
OUT = os.path.join(os.environ.get("FG_RIG_OUT") or "/tmp/fg-rig-out", KREL)
FALL = os.path.join(REPO, "Sources/FallGuardFieldTest/Resources/demo-fall.csv")
# a real fall with its gyroscope (SisFall F15, ITG3200): t_s,x_g,y_g,z_g,gx_dps,gy_dps,gz_dps
SIXAXIS = os.path.join(REPO, "Tests/FallGuardFieldTestTests/Fixtures/sixaxis/F15_SA01_R01.csv")
LIBGPIOD2 = os.environ.get("FALLGUARD_LIBGPIOD2_DIR", "/var/cache/fallguard/libgpiod2")
G = 9.80665

results = {"pass": 0, "fail": 0, "skip": 0}
figures = []


def say(msg):
    print(msg, flush=True)


def check(name, ok, detail=""):
    results["pass" if ok else "fail"] += 1
    say(f"{'PASS' if ok else 'FAIL'}: {name}{': ' + detail if detail else ''}")
    return ok


def skip(name, why):
    results["skip"] += 1
    say(f"SKIP: {name}: {why}")


def figure(**kw):
    kw["kernel"] = KREL
    figures.append(kw)
    with open(os.path.join(OUT, "figures.jsonl"), "a") as f:
        f.write(json.dumps(kw) + "\n")


def env():
    out = {}
    for line in open("/tmp/fg-rig.env"):
        k, _, v = line.strip().partition("=")
        out[k] = v
    return out


E = env()


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def read(path):
    with open(path) as f:
        return f.read().strip()


def write(path, value):
    with open(path, "w") as f:
        f.write(value)


def iio(name):
    for d in sorted(glob.glob("/sys/bus/iio/devices/iio:device*")):
        try:
            if read(d + "/name") == name:
                return d
        except OSError:
            pass
    return None


def lib_env(lib):
    e = dict(os.environ)
    if lib == "v2" and os.path.exists(LIBGPIOD2 + "/lib/libgpiod.so.3"):
        e["LD_LIBRARY_PATH"] = LIBGPIOD2 + "/lib" + (":" + e["LD_LIBRARY_PATH"] if e.get("LD_LIBRARY_PATH") else "")
    return e


def libs():
    want = (os.environ.get("FG_RIG_LIBS") or "v1,v2").split(",")
    out = []
    for lib in want:
        if lib == "v2" and not os.path.exists(LIBGPIOD2 + "/lib/libgpiod.so.3") and not glob.glob("/usr/lib/*/libgpiod.so.3"):
            skip(f"libgpiod 2.x", f"libgpiod.so.3 neither installed nor unpacked in {LIBGPIOD2}/lib (tools/setup-debian)")
            continue
        out.append(lib)
    return out


def start(args, out, err=None, envd=None):
    return subprocess.Popen([FG] + args, stdout=open(out, "w"), stderr=open(err or out + ".err", "w"),
                            env=envd or os.environ)


def feeder(*args):
    return subprocess.Popen([sys.executable, os.path.join(RIG, "feeder.py")] + list(args), stderr=subprocess.PIPE, text=True)


def compare(*args):
    r = subprocess.run([sys.executable, os.path.join(RIG, "compare.py")] + list(args), capture_output=True, text=True)
    line = next((l for l in r.stdout.splitlines() if l.startswith("compare:")), r.stdout + r.stderr)
    fig = next((json.loads(l[8:]) for l in r.stdout.splitlines() if l.startswith("figures:")), {})
    return r.returncode == 0, line, fig


def wait_for(pred, timeout, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


def text(path):
    try:
        return open(path, errors="replace").read()
    except OSError:
        return ""


# ---------------------------------------------------------------------------------------
def t_devices():
    o = os.path.join(OUT, "devices.json")
    r = subprocess.run([FG, "devices", "--json"], capture_output=True, text=True)
    open(o, "w").write(r.stdout)
    if not check("fallguard devices --json exits 0", r.returncode == 0, r.stderr.strip()[-300:]):
        return
    devs = {d["name"]: d for d in json.loads(r.stdout)}
    for name in ("adxl345", "mpu6050"):
        d = iio(name)
        if not d:
            continue
        j = devs.get(name)
        if not check(f"devices lists {name}", j is not None, f"listed: {sorted(devs)}"):
            continue
        check(f"devices: {name} id", j["id"] == os.path.basename(d), f"{j['id']} vs {os.path.basename(d)}")
        rate_attr = "in_accel_sampling_frequency" if name == "adxl345" else "sampling_frequency"
        rate = float(read(f"{d}/{rate_attr}"))
        check(f"devices: {name} rate = the driver's {rate_attr}", abs(j["samplingFrequency"] - rate) < 1e-9,
              f"{j['samplingFrequency']} vs {rate}")
        avail = [float(v) for v in read(f"{d}/sampling_frequency_available").split()]
        # fallguard leaves out rates below Resampler.rates (0.1 Hz): the ADXL345's 0.09765625
        shown = [v for v in avail if v >= 0.1]
        check(f"devices: {name} available rates = the driver's list (>= 0.1 Hz)",
              sorted(j["availableFrequencies"]) == sorted(shown), f"{j['availableFrequencies']} vs {avail}")
        scale = float(read(f"{d}/in_accel_scale"))
        check(f"devices: {name} scale = in_accel_scale", abs(j["scale"] - scale) < 1e-12, f"{j['scale']} vs {scale}")
        if os.path.exists(f"{d}/in_accel_scale_available"):
            sa = sorted(float(v) for v in read(f"{d}/in_accel_scale_available").split())
            check(f"devices: {name} available scales", sorted(j.get("availableScales") or []) == sa, f"{j.get('availableScales')} vs {sa}")
        if os.path.exists(f"{d}/in_anglvel_scale"):
            g = j.get("gyroscope") or {}
            gs = float(read(f"{d}/in_anglvel_scale"))
            check(f"devices: {name} gyroscope scale = in_anglvel_scale", abs(g.get("scale", 0) - gs) < 1e-15, f"{g} vs {gs}")
            gsa = sorted(float(v) for v in read(f"{d}/in_anglvel_scale_available").split())
            check(f"devices: {name} gyroscope available scales", sorted(g.get("availableScales") or []) == gsa,
                  f"{g.get('availableScales')} vs {gsa}")
        else:
            check(f"devices: {name} has no gyroscope", j.get("gyroscope") is None, f"{j.get('gyroscope')}")
        buffered = os.path.isdir(f"{d}/buffer") and os.path.isdir(f"{d}/scan_elements")
        check(f"devices: {name} mode", j["mode"] == ("buffered" if buffered else "polled"), j["mode"])
        if buffered and os.path.exists(f"{d}/trigger"):
            trig = [read(t + "/name") for t in glob.glob("/sys/bus/iio/devices/trigger*")]
            check(f"devices: {name} trigger is the driver's", j.get("trigger") in trig, f"{j.get('trigger')} vs {trig}")
        figure(check="devices", device=name, id=j["id"], mode=j["mode"], rate=j["samplingFrequency"],
               scale=j["scale"], available=j["availableFrequencies"], trigger=j.get("trigger"))


def t_adxl345():
    d = iio("adxl345")
    if not d:
        return skip("adxl345", "no adxl345 in this guest")
    o = OUT
    seconds = 7
    # 1. watch --polled: every raw poll against the fed samples (any phase between the two clocks)
    arr = f"{o}/adxl-arrivals.txt"
    w = start(["watch", "--device", "adxl345", "--polled", "--json", "--arrival-log", arr], f"{o}/adxl-watch.jsonl")
    opened = wait_for(lambda: '"opened"' in text(f"{o}/adxl-watch.jsonl") or w.poll() is not None, 20)
    check("adxl345: watch opened the device", opened and w.poll() is None, text(f"{o}/adxl-watch.jsonl.err")[-300:])
    rate = float(read(f"{d}/in_accel_sampling_frequency"))
    fd = feeder("--chip", "adxl345", "--recording", FALL, "--start", "3", "--seconds", str(seconds), "--log", f"{o}/adxl-fed.csv")
    _, ferr = fd.communicate()
    say(ferr.strip())
    time.sleep(0.2)
    w.send_signal(signal.SIGINT)
    w.wait(10)
    check("adxl345: watch exited 0", w.returncode == 0, text(f"{o}/adxl-watch.jsonl.err")[-300:])
    opened = [json.loads(l) for l in open(f"{o}/adxl-watch.jsonl") if '"opened"' in l]
    check("adxl345: watch runs at the rate the driver reports", bool(opened) and abs(opened[0]["rate"] - rate) < 1e-9,
          f"{opened[:1]} vs driver {rate}")
    ok, line, fig = compare("arrivals", f"{o}/adxl-fed.csv", arr, "--polled", "--label", "adxl345 watch --polled (raw polls)",
                            "--min-samples", str(int(seconds * rate * 0.95)))
    check("adxl345: every raw poll is a fed sample within 1 LSB", ok, line)
    figure(check="adxl345-polled-arrivals", driver_rate_hz=rate, **fig)

    # 2. record: 40 Hz rows interpolated from the 50 Hz polls; the feeder writes each sample
    # right after the recorder's poll has read the previous one (lock-step through the trace
    # event), so each poll reads exactly one new, whole sample
    # Under software emulation the feeder is sometimes late for a poll (the poll then reads the
    # previous sample again: `polls` > 1 in its log). The comparison models that, but not every
    # such miss; a record that fails after the feeder was late is recorded once more, and both
    # results are printed. A stalled poll (rows slipped up to 2 samples) or a torn one (axes
    # from two samples) may excuse at most max(3, 2 %) rows (compare.py); a wrong reading
    # (scale 1 %, an offset of 2 LSB, swapped axes, a dropped sample) fails both times.
    def record_once(attempt, files=""):
        rec = f"{o}/adxl-record{files}.csv"
        err = f"{o}/adxl-record{files}.out.err"
        r = start(["record", "--device", "adxl345", "--out", rec], f"{o}/adxl-record{files}.out")
        opened = wait_for(lambda: "recording adxl345" in text(err) or r.poll() is not None, 20)
        check(f"adxl345: record opened the device{attempt}", opened and r.poll() is None, text(err)[-300:])
        fed = f"{o}/adxl-rec-fed{files}.csv"
        fd = feeder("--chip", "adxl345", "--follow-polls", "--recording", FALL, "--start", "3", "--seconds", str(seconds),
                    "--log", fed)
        _, ferr = fd.communicate()
        say(ferr.strip())
        time.sleep(0.2)
        r.send_signal(signal.SIGINT)
        r.wait(10)
        check(f"adxl345: record exited 0{attempt}", r.returncode == 0, text(err)[-300:])
        check(f"adxl345: record reads at the driver's rate{attempt}", f"polled, {rate} Hz -> 40 Hz" in text(err), text(err)[-200:])
        late = sum(1 for row in text(fed).splitlines()[1:] if not row.startswith("#") and row.count(",") == 6
                   and row.rsplit(",", 1)[1].strip() not in ("1", "-1", "polls"))
        result = compare("record", fed, rec, "--label", f"adxl345 record ({rate:g} -> 40 Hz)",
                         "--min-samples", str(int(seconds * 40 * 0.95)))
        return result, late
    (ok, line, fig), late = record_once("")
    if not ok and late > 0:
        say(f"adxl345 record: {line}; the feeder was late for {late} polls: recording once more")
        (ok, line2, fig), _ = record_once(" (second attempt)", "-2")
        line = f"{line2} (second attempt; the first, with the feeder late for {late} polls: {line})"
    check("adxl345: record reproduces the fed recording within 1 LSB (interpolated to 40 Hz)", ok, line)
    cap = fig.get("captured_rate_hz") or 0
    check("adxl345: record rows at 40 Hz", abs(cap - 40) < 0.4, f"{cap} Hz")
    figure(check="adxl345-record", driver_rate_hz=rate, **fig)


def t_mpu6050():
    d = iio("mpu6050")
    if not d:
        return skip("mpu6050", "no mpu6050 in this guest")
    if not os.path.isdir(d + "/buffer"):
        return skip("mpu6050 buffered", "no buffer (no interrupt)")
    o = OUT
    n = int(os.environ.get("FG_RIG_MPU_SAMPLES", "2000"))
    rate = 100
    arr = f"{o}/mpu-arrivals.txt"
    if os.path.exists(arr):
        os.unlink(arr)
    # watch until the feeder is done and one more batch (0.4 s) has been read
    w = start(["watch", "--device", "mpu6050", "--rate", str(rate), "--json", "--arrival-log", arr], f"{o}/mpu-watch.jsonl")
    fd = feeder("--chip", "mpu6050", "--fire", "--lockstep", "--wait-buffer", "30", "--wait-rate", str(rate),
                "--recording", SIXAXIS, "--loop", "--count", str(n), "--log", f"{o}/mpu-fed.csv")
    _, ferr = fd.communicate()
    say(ferr.strip())
    check("mpu6050: feeder ran", fd.returncode == 0, ferr.strip()[-300:])
    m = re.search(r"lock-step: (\d+) datum reads not seen", ferr)
    check("mpu6050: the driver read every datum (lock-step, trace event)", m is not None and m.group(1) == "0", ferr.strip()[-200:])
    wait_for(lambda: sum(1 for _ in open(arr)) >= n if os.path.exists(arr) else False, 5)
    time.sleep(1)
    w.send_signal(signal.SIGINT)
    try:
        w.wait(10)
    except subprocess.TimeoutExpired:
        w.kill()
        w.wait()
    check("mpu6050: watch exited 0 on SIGINT", w.returncode == 0, f"exit {w.returncode}: " + text(f"{o}/mpu-watch.jsonl.err")[-300:])
    opened = [json.loads(l) for l in open(f"{o}/mpu-watch.jsonl") if '"opened"' in l]
    check("mpu6050: watch buffered at the driver's rate", bool(opened) and opened[0]["mode"] == "buffered"
          and abs(opened[0]["rate"] - rate) < 1e-9, f"{opened[:1]}")
    check("mpu6050: watch reads the gyroscope (six axes)", bool(opened) and opened[0].get("gyroscope") is True, f"{opened[:1]}")
    datum = next((l.strip()[8:] for l in open(f"{o}/mpu-fed.csv") if l.startswith("# datum=")), "")
    check("mpu6050: the driver's scan holds accel and gyro (12-byte FIFO datum)", datum == "accel+gyro", datum)
    summ = [json.loads(l) for l in open(f"{o}/mpu-watch.jsonl") if '"summary"' in l]
    # the accelerometer within 1 LSB (the arrival log's g, as before); the gyroscope exactly:
    # counts x in_anglvel_scale x 180/pi read back to within 0.001 count
    ok, line, fig = compare("arrivals", f"{o}/mpu-fed.csv", arr, "--label", f"mpu6050 buffered watch ({n} fired)",
                            "--min-samples", str(n), "--gyro-max-lsb", "0.001")
    check(f"mpu6050: buffered capture of {n} fired samples, 0 lost, within 1 LSB, gyroscope exact",
          ok and fig.get("captured") == n and fig.get("gyro_compared") == n, line)
    figure(check="mpu6050-buffered", fired=n, overruns=summ[0]["overruns"] if summ else None, **fig)

    # record at 40 Hz: the MPU6050 runs at exactly 40 Hz, the recorder passes samples through
    rec = f"{o}/mpu-record.csv"
    seconds = 8
    r = start(["record", "--device", "mpu6050", "--out", rec], f"{o}/mpu-record.out")
    fd = feeder("--chip", "mpu6050", "--fire", "--lockstep", "--wait-buffer", "30", "--wait-rate", "40",
                "--recording", SIXAXIS, "--count", str(seconds * 40), "--log", f"{o}/mpu-rec-fed.csv")
    _, ferr = fd.communicate()
    say(ferr.strip())
    time.sleep(1)
    r.send_signal(signal.SIGINT)
    r.wait(10)
    check("mpu6050: record exited 0", r.returncode == 0, text(f"{o}/mpu-record.out.err")[-300:])
    ok, line, fig = compare("record", f"{o}/mpu-rec-fed.csv", rec, "--label", "mpu6050 record (40 Hz)",
                            "--min-samples", str(seconds * 40 - 16))
    check("mpu6050: record reproduces the fed six-axis recording within 1 LSB at 40 Hz", ok, line)
    header = text(rec).split("\n", 1)[0]
    check("mpu6050: record writes the six-axis format", header == "t_s,x_g,y_g,z_g,gx_dps,gy_dps,gz_dps", header)
    figure(check="mpu6050-record", **fig)


class LineWatch:
    """Samples gpio-sim's sim_gpioN/value every ~1 ms and keeps the transitions."""

    def __init__(self, offset):
        self.path = f"{E['FG_GPIOSIM_SYSFS']}/sim_gpio{offset}/value"
        self.changes = []
        self.stalls = []  # (t_ns, ms): the sampler itself did not run for >= 40 ms before t_ns
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        last = None
        fd = os.open(self.path, os.O_RDONLY)
        before = None
        while not self.stop:
            t = now_ns()
            if before is not None and t - before >= 40_000_000:
                self.stalls.append((t, round((t - before) / 1e6)))
            before = t
            v = os.pread(fd, 8, 0).strip()
            if v != last:
                self.changes.append((now_ns(), int(v)))
                last = v
            time.sleep(0.001)
        os.close(fd)

    def done(self):
        self.stop = True
        self.t.join()
        return self.changes

    def pulses(self):
        """(start_ns, length_ms) of every high period."""
        out = []
        for (t, v), nxt in zip(self.changes, self.changes[1:] + [None]):
            if v == 1 and nxt:
                out.append((t, (nxt[0] - t) / 1e6))
        return out


def press(offset, ms):
    sim = f"{E['FG_GPIOSIM_SYSFS']}/sim_gpio{offset}/pull"
    t0 = now_ns()
    write(sim, "pull-down")
    time.sleep(ms / 1000)
    t1 = now_ns()
    write(sim, "pull-up")
    return t0, t1


def released(offsets):
    """Lines not requested by anyone (Debian's gpioinfo, libgpiod 1.6: 'unused')."""
    r = subprocess.run(["gpioinfo", E["FG_GPIOCHIP"]], capture_output=True, text=True)
    bad = []
    for off in offsets:
        m = re.search(rf"^\s+line\s+{off}:.*$", r.stdout, re.M)
        if not m or "unused" not in m.group(0):
            bad.append(m.group(0).strip() if m else f"line {off} missing")
    return bad


def gpio_attempt(lib, chip, o):
    """One `fallguard gpio` run: the 150/150x4 pattern watched on sim_gpio18, a 300 ms press."""
    # the button idles released: pull-up (the request's bias says the same)
    write(f"{E['FG_GPIOSIM_SYSFS']}/sim_gpio17/pull", "pull-up")
    buzzer = LineWatch(18)
    p = subprocess.Popen([FG, "gpio", "--library", lib, "--chip", chip, "--output", "GPIO18", "--button", "GPIO17",
                          "--pattern", "150/150x4+100000", "--duration", "3"],
                         stdout=open(o + ".jsonl", "w"), stderr=open(o + ".err", "w"), env=lib_env(lib))
    started = wait_for(lambda: '"request' in text(o + ".jsonl") or p.poll() is not None, 15)
    time.sleep(1.4)
    t_press, t_release = press(17, 300)
    p.wait(20)
    buzzer.done()
    pulses = buzzer.pulses()
    lens = [round(x[1]) for x in pulses]
    # The player's edges are absolute deadlines from the moment the pattern was asked for,
    # so a late first wake-up (a starved TCG guest: 85 ms once) shortens only the first
    # beep; every later edge stays on the 150/150 grid. The grid is what is checked: beeps
    # 2-4 are 100-250 ms, every beep starts 200-400 ms after the one before, and the first
    # one is there (>= 30 ms) and ends 100-250 ms before the second starts.
    gaps = [round((b[0] - a[0]) / 1e6 - a[1]) for a, b in zip(pulses, pulses[1:])]
    periods = [round((b[0] - a[0]) / 1e6) for a, b in zip(pulses, pulses[1:])]
    grid = (len(pulses) == 4 and 30 <= lens[0] <= 250 and all(100 <= x <= 250 for x in lens[1:])
            and all(200 <= x <= 400 for x in periods) and all(100 <= x <= 250 for x in gaps))
    # stalls of the guest seen by the sampler itself while the pattern played: from 150 ms
    # before its first rise to its last fall (to the press if the beeps are not all there)
    first = pulses[0][0] - 150_000_000 if pulses else 0
    last = pulses[-1][0] + int(pulses[-1][1] * 1e6) if len(pulses) == 4 else t_press
    stalls = [ms for t, ms in buzzer.stalls if t > first and t - ms * 1_000_000 < last]
    return dict(p=p, started=started, t_press=t_press, lens=lens, gaps=gaps, periods=periods, grid=grid,
                stalls=stalls)


def t_gpio():
    if not E.get("FG_GPIOCHIP"):
        return skip("gpio", "no gpio-sim chip")
    chip = E["FG_GPIOCHIP"]
    for lib in libs():
        o = f"{OUT}/gpio-{lib}"
        # A timing check is judged on a run the guest did not stall through: CI's 6.12 guest
        # (TCG on a loaded 2-core host) once stalled ~144 ms on a beep's rising edge, so that the
        # beep lasted 6 ms (high periods [135, 150, 6, 150]); the sampler beside it saw the same
        # stall. A run that exited 0 but whose grid fails while the sampler saw a stall of >= 40 ms
        # during the beeps is run again, up to 3 times (each attempt's output kept); a grid that
        # fails with no stall seen, or a run that failed, fails at once.
        tries = []
        for attempt in range(3):
            a = gpio_attempt(lib, chip, o)
            tries.append(a)
            if a["grid"] or not a["stalls"] or a["p"].returncode != 0 or not a["started"]:
                break
            for ext in (".jsonl", ".err"):   # the attempt's own output stays beside the next one's
                os.replace(o + ext, f"{o}.attempt{attempt + 1}{ext}")
            say(f"NOTE: gpio {lib}: attempt {attempt + 1}: grid {a['lens']} ms with the guest stalled {a['stalls']} ms: run again")
        a = tries[-1]
        p, started, t_press = a["p"], a["started"], a["t_press"]
        out = [json.loads(l) for l in text(o + ".jsonl").splitlines() if l.startswith("{")]
        libline = next((e for e in out if e.get("event") == "library"), {})
        check(f"gpio {lib}: fallguard gpio exited 0", p.returncode == 0 and started, text(o + ".err")[-300:])
        want = "v1" if lib == "v1" else "v2"
        check(f"gpio {lib}: libgpiod in use", libline.get("api") == want, json.dumps(libline))
        lens, gaps = a["lens"], a["gaps"]
        check(f"gpio {lib}: buzzer pattern 150/150x4 in sim_gpio18/value", a["grid"],
              f"high periods (ms): {lens}, low gaps (ms): {gaps}, starts apart (ms): {a['periods']}"
              + (f", guest stalls seen (ms): {a['stalls']}" if a["stalls"] else "")
              + (f", after {len(tries)} runs" if len(tries) > 1 else ""))
        ev = {e.get("event"): e for e in out if e.get("event") in ("pressed", "released")}
        pe = ev.get("pressed")
        delay = (pe["t_ns"] - t_press) / 1e6 if pe and "t_ns" in pe else None
        check(f"gpio {lib}: the press through pull is seen with its edge", pe is not None and delay is not None and -5 < delay < 300,
              f"pressed event {pe}, {delay} ms after the pull")
        re_ = ev.get("released")
        check(f"gpio {lib}: the release is seen, a short press of ~300 ms", re_ is not None,
              json.dumps(re_))
        bad = released([17, 18])
        check(f"gpio {lib}: lines released on exit", not bad, "; ".join(bad))
        check(f"gpio {lib}: buzzer low after exit", read(f"{E['FG_GPIOSIM_SYSFS']}/sim_gpio18/value") == "0")
        figure(check="gpio", lib=lib, libgpiod=libline.get("version"), pulses_ms=lens, gaps_ms=gaps,
               press_to_event_ms=delay, released_event=re_, lines_released=not bad,
               runs=len(tries), stalls_ms=[t["stalls"] for t in tries])


def stop_run(p, fd):
    if fd is not None:
        fd.send_signal(signal.SIGTERM)
        fd.wait()
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def t_run():
    d = iio("adxl345")
    if not d or not E.get("FG_GPIOCHIP"):
        return skip("run", "needs the adxl345 and gpio-sim")
    run_libs = libs()
    for lib in run_libs:
        o = f"{OUT}/run-{lib}"
        shutil.rmtree(o, ignore_errors=True)
        os.makedirs(o)
        cfg = f"{o}/fallguard.yaml"
        # the state (SQLite outbox) on the guest's tmpfs: 9p (FG_RIG_OUT) has no working locks
        st = f"/tmp/fg-state-{lib}"
        shutil.rmtree(st, ignore_errors=True)
        kinds = ["fall", "help-requested", "resolved", "device-problem", "heartbeat"]
        open(cfg, "w").write(f"""sensor: {{uri: "local:", device: adxl345}}
gpio: {{library: {lib}, chip: {E['FG_GPIOCHIP']}, buzzer: {{line: GPIO18}}, button: {{line: GPIO17, bias: pull-up}}, led: {{line: GPIO27}}}}
alarm: {{countdown: 8, final-phase: 2}}
state: {{directory: "{st}"}}
metrics: {{enabled: false}}
wearer: {{name: Rig Wearer, location: the kernel rig}}
channels:
  file: {{type: exec, command: ["/bin/sh", "-c", "cat >> {o}/alerts.jsonl; echo >> {o}/alerts.jsonl"]}}
policy:
""" + "".join(f"  {k}: {{primary: [], others: [], broadcast: [file]}}\n" for k in kinds))
        write(f"{E['FG_GPIOSIM_SYSFS']}/sim_gpio17/pull", "pull-up")
        buzzer = LineWatch(18)
        log = f"{o}/run.log"
        p = subprocess.Popen([FG, "run", "--config", cfg, "--duration", "60"], stdout=open(log, "w"), stderr=subprocess.STDOUT, env=lib_env(lib))
        # 90 s: a debug build under QEMU without KVM on a 1 GB guest; CI's 6.12 guest once took
        # over 30 s for the second run (libgpiod 2) with nothing logged after the configuration
        # warnings, so the time it took is a figure, and the failure says whether it exited
        t_start = now_ns()
        up = wait_for(lambda: "monitoring:" in text(log) or p.poll() is not None, 90)
        figure(check="run-start", lib=lib, monitoring_after_s=round((now_ns() - t_start) / 1e9, 1) if up else None)
        check(f"run {lib}: monitoring", up and p.poll() is None,
              f"exit {p.poll()} after {(now_ns() - t_start) / 1e9:.1f} s; log: " + text(log)[-1200:])
        if not up or p.poll() is not None:
            buzzer.done()
            continue
        # the bundled real fall, played into the adxl345 at the driver's rate
        fd = feeder("--chip", "adxl345", "--recording", FALL, "--start", "3", "--seconds", "12", "--log", f"{o}/fed.csv")
        fall = wait_for(lambda: "fall suspected" in text(log), 25)
        t_fall = now_ns()
        check(f"run {lib}: fall suspected", fall, text(log)[-400:])
        time.sleep(2.5)
        status = text(f"{st}/status.json")
        counting = '"state" : "countdown"' in status
        t_press, _ = press(17, 200)
        aborted = wait_for(lambda: "false-alarm" in text(f"{st}/incidents.jsonl") or "abort" in text(f"{st}/incidents.jsonl"), 5)
        t_abort = now_ns()
        fd.wait()
        time.sleep(1)
        pulses = [x for x in buzzer.pulses() if x[0] >= t_fall - 3e9]
        before = [x for x in pulses if x[0] < t_press]
        after = [x for x in buzzer.pulses() if x[0] > t_press + 1e9]
        check(f"run {lib}: the buzzer sounds the countdown (gpio-sim value)", len(before) >= 2,
              f"{len(before)} beeps before the press: {[round(x[1]) for x in before][:10]} ms")
        inc = text(f"{st}/incidents.jsonl")
        events = [json.loads(l) for l in inc.splitlines() if l.strip()]
        check(f"run {lib}: counting down 2.5 s after the detection (status.json)", counting, status[-400:])
        check(f"run {lib}: the countdown is in the incident log", any("fall-suspected" in json.dumps(e) for e in events), inc[-400:])
        check(f"run {lib}: a press through gpio-sim aborts it", aborted, inc[-400:])
        check(f"run {lib}: silent after the abort", len(after) == 0 and read(f"{E['FG_GPIOSIM_SYSFS']}/sim_gpio18/value") == "0",
              f"{len(after)} beeps after")
        alerts = text(f"{o}/alerts.jsonl")
        check(f"run {lib}: no fall alert sent", '"fall"' not in alerts, alerts[-300:])
        figure(check="run", lib=lib, beeps_before_press=len(before), press_to_abort_ms=(t_abort - t_press) / 1e6,
               aborted=aborted)

        if lib != run_libs[-1]:
            # unbinding is about the sensor, not the GPIO library: once per boot (last library)
            stop_run(p, fd=None)
            buzzer.done()
            check(f"run {lib}: stops cleanly on SIGTERM", p.returncode == 0, text(log)[-300:])
            check(f"run {lib}: lines released on exit", not released([17, 18, 27]), "; ".join(released([17, 18, 27])))
            shutil.copytree(st, f"{o}/state", ignore=shutil.ignore_patterns("*.sqlite*"))
            continue
        # unbind and bind the driver mid-run
        client = read(f"{E['FG_RIG_SYSFS']}/adxl345_client")
        drv = "/sys/bus/i2c/drivers/adxl345_i2c"
        fd = feeder("--chip", "adxl345", "--recording", FALL, "--seconds", "20", "--loop")
        time.sleep(1)
        mark = len(text(log))
        t_unbind = now_ns()
        write(f"{drv}/unbind", client)
        fault = wait_for(lambda: re.search(r"sensor .*: (disappeared|io-error|stalled)", text(log)[mark:]) is not None, 10)
        t_fault = now_ns()
        check(f"run {lib}: unbinding adxl345_i2c is reported as a sensor fault", fault, text(log)[mark:][-400:])
        time.sleep(2)
        t_bind = now_ns()
        write(f"{drv}/bind", client)
        back = wait_for(lambda: re.search(r"sensor .*: \S+ ended", text(log)[mark:]) is not None, 15)
        t_back = now_ns()
        check(f"run {lib}: binding it again is reported as recovered", back, text(log)[mark:][-600:])
        stop_run(p, fd)
        buzzer.done()
        check(f"run {lib}: stops cleanly on SIGTERM", p.returncode == 0, text(log)[-300:])
        check(f"run {lib}: lines released on exit", not released([17, 18, 27]), "; ".join(released([17, 18, 27])))
        shutil.copytree(st, f"{o}/state", ignore=shutil.ignore_patterns("*.sqlite*"))
        figure(check="unbind-rebind", lib=lib, fault_reported_s=round((t_fault - t_unbind) / 1e9, 2) if fault else None,
               recovered_after_bind_s=round((t_back - t_bind) / 1e9, 2) if back else None,
               log=[l for l in text(log)[mark:].splitlines() if "sensor" in l][:6])


def t_power():
    """Issue 36: `fallguard run` watching the real test_power driver (built from the kernel's
    own source: Debian has no CONFIG_TEST_POWER). Before the module: nothing claimed. Then its
    battery at 15 % -> one "battery low" however many polls see it; the mains (ac and usb)
    offline for longer than on-battery-after -> "on battery"; online -> "mains back"."""
    ko = os.path.join(os.environ.get("FG_RIG_BUILD", ""), "test_power.ko")
    if not os.path.exists(ko):
        return skip("power", f"no {ko} (tools/kernel-rig/build-modules.sh builds it)")
    o = f"{OUT}/power"
    shutil.rmtree(o, ignore_errors=True)
    os.makedirs(o)
    st = "/tmp/fg-state-power"
    shutil.rmtree(st, ignore_errors=True)
    before = sorted(os.listdir("/sys/class/power_supply")) if os.path.isdir("/sys/class/power_supply") else []
    cfg = f"{o}/fallguard.yaml"
    kinds = ["fall", "help-requested", "resolved", "device-problem", "heartbeat"]
    open(cfg, "w").write(f"""sensor: {{replay: "{FALL}"}}
gpio: {{enabled: false}}
alarm: {{countdown: 5, final-phase: 1}}
state: {{directory: "{st}"}}
metrics: {{enabled: false}}
power: {{poll-interval: 1, battery-low: 20 %, on-battery-after: 3}}
wearer: {{name: Rig Wearer}}
channels:
  file: {{type: exec, command: ["/bin/sh", "-c", "cat >> {o}/alerts.jsonl; echo >> {o}/alerts.jsonl"]}}
policy:
""" + "".join(f"  {k}: {{primary: [], others: [], broadcast: [file]}}\n" for k in kinds))
    log = f"{o}/run.log"
    p = subprocess.Popen([FG, "run", "--config", cfg, "--duration", "90"], stdout=open(log, "w"), stderr=subprocess.STDOUT)

    def status():
        try:
            return json.loads(text(f"{st}/status.json") or "{}")
        except ValueError:
            return {}

    def power_alerts():
        out = []
        for line in text(f"{o}/alerts.jsonl").splitlines():
            try:
                a = json.loads(line)["alert"]
            except (ValueError, KeyError):
                continue
            fault = a.get("sensorFault") or a.get("sensor_fault") or {}
            if fault.get("problem") in ("battery-low", "shutting-down", "on-battery"):
                out.append(f"{a['kind']} {fault['problem']}")
        return out

    params = "/sys/module/test_power/parameters"
    try:
        up = wait_for(lambda: status().get("state") is not None or p.poll() is not None, 40)
        check("power: fallguard run is up", up and p.poll() is None, text(log)[-400:])
        if not up or p.poll() is not None:
            return
        time.sleep(2.5)
        s = status()
        check("power: no power_supply device -> nothing claimed", before != [] or "power" not in s,
              f"power_supply before the module: {before}; status power: {s.get('power')}")
        r = subprocess.run(["insmod", ko], capture_output=True, text=True)
        check("power: insmod test_power.ko", r.returncode == 0, r.stderr.strip())
        if r.returncode != 0:
            return
        seen = wait_for(lambda: any(b.get("name") == "test_battery" for b in (status().get("power") or {}).get("batteries", [])), 10)
        check("power: test_power's battery and mains in status.json", seen and status()["power"].get("mains_online") is True,
              json.dumps(status().get("power")))
        t0 = time.monotonic()
        write(f"{params}/battery_capacity", "15")
        low = wait_for(lambda: "device-problem battery-low" in power_alerts(), 10)
        t_low = time.monotonic() - t0
        time.sleep(4)   # four more polls at 15 %
        lows = power_alerts().count("device-problem battery-low")
        check("power: battery at 15 % -> battery low, once (not once per poll)", low and lows == 1,
              f"{lows} after {t_low:.1f} s + 4 s; {power_alerts()}")
        t1 = time.monotonic()
        write(f"{params}/ac_online", "off")
        write(f"{params}/usb_online", "off")
        time.sleep(2)
        early = "device-problem on-battery" in power_alerts()
        on_batt = wait_for(lambda: "device-problem on-battery" in power_alerts(), 10)
        t_on = time.monotonic() - t1
        check("power: mains offline > on-battery-after (3 s) -> on battery, not before", on_batt and not early and t_on >= 3,
              f"after {t_on:.1f} s; {power_alerts()}")
        t2 = time.monotonic()
        write(f"{params}/ac_online", "on")
        back = wait_for(lambda: "device-recovered on-battery" in power_alerts(), 10)
        t_back = time.monotonic() - t2
        time.sleep(2)
        final = power_alerts()
        check("power: mains online -> mains back; each alert exactly once", back and final == [
            "device-problem battery-low", "device-problem on-battery", "device-recovered on-battery"], f"{final}")
        figure(check="power", battery_low_after_s=round(t_low, 1), on_battery_after_s=round(t_on, 1),
               mains_back_after_s=round(t_back, 1), alerts=final, power_supply_before=before)
    finally:
        p.kill()
        p.wait()
        subprocess.run(["rmmod", "test_power"], capture_output=True)
        shutil.copytree(st, f"{o}/state", ignore=shutil.ignore_patterns("*.sqlite*"), dirs_exist_ok=True)


def t_clock():
    """Issue 36: the guest's real CLOCK_REALTIME stepped with `date -s` (+3 days, then -1 h)
    during a countdown and again during the outbox's retry of its alert: the countdown keeps
    its length (incidents.jsonl's monotonic times), the retry its wait, the alert goes out once."""
    o = f"{OUT}/clock"
    shutil.rmtree(o, ignore_errors=True)
    os.makedirs(o)
    st = "/tmp/fg-state-clock"
    shutil.rmtree(st, ignore_errors=True)
    cfg = f"{o}/fallguard.yaml"
    kinds = ["fall", "help-requested", "resolved", "device-problem", "heartbeat"]
    once = f"[ -e {o}/tried ] || {{ touch {o}/tried; exit 1; }}; "
    open(cfg, "w").write(f"""sensor: {{replay: "{FALL}"}}
gpio: {{enabled: false}}
alarm: {{countdown: 8, final-phase: 1}}
state: {{directory: "{st}"}}
metrics: {{enabled: false}}
power: {{enabled: false}}
wearer: {{name: Rig Wearer}}
channels:
  file: {{type: exec, command: ["/bin/sh", "-c", "{once}cat >> {o}/alerts.jsonl; echo >> {o}/alerts.jsonl"]}}
policy:
  retry: {{initial: 5, max: 5, jitter: 0}}
""" + "".join(f"  {k}: {{primary: [], others: [], broadcast: [file]}}\n" for k in kinds))

    def step(seconds):
        subprocess.run(["date", "-s", f"@{time.time() + seconds:.3f}"], capture_output=True)

    def events():
        out = []
        for line in text(f"{st}/incidents.jsonl").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out

    def falls():
        return [l for l in text(f"{o}/alerts.jsonl").splitlines() if '"kind":"fall"' in l]

    wall0, mono0 = time.time(), time.monotonic()
    log = f"{o}/run.log"
    p = subprocess.Popen([FG, "run", "--config", cfg, "--duration", "120"], stdout=open(log, "w"), stderr=subprocess.STDOUT)
    try:
        fall = wait_for(lambda: any(e.get("event") == "fall-suspected" for e in events()) or p.poll() is not None, 60)
        check("clock: the fall starts the countdown", fall and p.poll() is None, text(log)[-300:])
        if not fall or p.poll() is not None:
            return
        time.sleep(2)
        step(3 * 86400)
        time.sleep(2)
        step(-3600)
        tried = wait_for(lambda: os.path.exists(f"{o}/tried"), 15)
        t_tried = time.monotonic()
        check("clock: the alert's first attempt (refused by the channel)", tried)
        time.sleep(1)
        step(3 * 86400)
        time.sleep(1.5)
        step(-3600)
        sent = wait_for(lambda: len(falls()) >= 1, 20)
        t_sent = time.monotonic()
        time.sleep(3)
        ev = events()
        t0 = next((e["time"] for e in ev if e.get("event") == "fall-suspected"), None)
        t1 = next((e["time"] for e in ev if e.get("event") == "countdown-expired"), None)
        length = (t1 - t0) if t0 is not None and t1 is not None else None
        check("clock: the countdown keeps its 8 s across +3 days and -1 h (within 0.2 s)",
              length is not None and abs(length - 8) <= 0.2, f"{length}")
        gap = t_sent - t_tried
        check("clock: the retry keeps its 5 s wait across +3 days and -1 h, the alert goes out once",
              sent and 4 <= gap <= 8 and len(falls()) == 1, f"retry after {gap:.1f} s, {len(falls())} fall alert(s)")
        figure(check="clock", countdown_s=round(length, 3) if length is not None else None, retry_after_s=round(gap, 1),
               fall_alerts=len(falls()))
    finally:
        p.kill()
        p.wait()
        subprocess.run(["date", "-s", f"@{wall0 + time.monotonic() - mono0:.3f}"], capture_output=True)
        shutil.copytree(st, f"{o}/state", ignore=shutil.ignore_patterns("*.sqlite*"), dirs_exist_ok=True)


def t_dump():
    """Attribute and uAPI dumps of the real devices, at probe state (so: first), for
    diff-dumps.py against the emulators' (tools/kernel-rig/emulator-dumps.sh on the host)."""
    dump = os.path.join(RIG, "dump-attrs.py")
    r = subprocess.run([sys.executable, dump, "iio", "--out", f"{OUT}/dump-iio.json"], capture_output=True, text=True)
    check("attribute dump of the real IIO devices", r.returncode == 0, (r.stdout + r.stderr).strip()[-300:])
    if E.get("FG_GPIOCHIP"):
        r = subprocess.run([sys.executable, dump, "gpio", "--chip", "/dev/" + E["FG_GPIOCHIP"], "--drive",
                            "sim:" + E["FG_GPIOSIM_SYSFS"], "--out", f"{OUT}/dump-gpio.json"], capture_output=True, text=True)
        check("uAPI dump of gpio-sim", r.returncode == 0, (r.stdout + r.stderr).strip()[-300:])


TESTS = {"dump": t_dump, "devices": t_devices, "adxl345": t_adxl345, "mpu6050": t_mpu6050, "gpio": t_gpio, "run": t_run,
         "power": t_power}
# Only with --only clock, alone: after its date -s steps the guest's session ends right after
# the check (its output cut, the checks after it not run, the guest's status 0 whatever they
# would have said; seen on 6.1 and 6.12, with or without stepping the clock back), so in the
# default run it would hide failures. The cause is not found yet (virtme's wall-clock timer?).
OPT_IN = {"clock": t_clock}


def main():
    only = (os.environ.get("FG_RIG_ONLY") or ",".join(TESTS)).split(",")
    if len(sys.argv) > 2 and sys.argv[1] == "--only":
        only = sys.argv[2].split(",")
    os.makedirs(OUT, exist_ok=True)
    if os.path.exists(os.path.join(OUT, "figures.jsonl")):
        os.unlink(os.path.join(OUT, "figures.jsonl"))
    if not os.access(FG, os.X_OK):
        check(f"fallguard binary {FG}", False, "not found or not executable (FALLGUARD_BIN)")
        return 1
    say(f"kernel {KREL}, fallguard {FG}, results in {OUT}")
    for name in only:
        say(f"\n=== {name}")
        t0 = time.monotonic()
        try:
            {**TESTS, **OPT_IN}[name]()
        except Exception as e:   # a crashed check is a failed check
            import traceback
            traceback.print_exc()
            check(f"{name} ran", False, repr(e))
        say(f"--- {name}: {time.monotonic() - t0:.1f} s")
    say(f"\nguest-tests {KREL}: {results['pass']} passed, {results['fail']} failed, {results['skip']} skipped")
    return 0 if results["fail"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
