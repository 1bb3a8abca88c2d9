#!/usr/bin/env python3
"""How long after an MQTT client hangs (SIGSTOP) the broker says it is offline (its last will),
with a given keepalive: the bound behind the bridges' default `keepalive` (issue 37: a hung bridge
offline within 20 s). N clients of libmosquitto (mosquitto_sub, the library the bridges use), each
with a retained will like a bridge's availability, are stopped at times spread over one keepalive,
so that every phase of their ping cycle is met. Prints each delay, p50 and max, and
'N passed, N failed' against the bar.
Usage: KEEPALIVE=8 N=12 BAR=20 bench/hung_offline.py   (about 30 s)
"""
import signal, os, socket, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from care_home import free_port   # noqa: E402

KEEPALIVE = int(os.environ.get("KEEPALIVE", "8"))
N = int(os.environ.get("N", "12"))
BAR = float(os.environ.get("BAR", "20"))


def main():
    folder = tempfile.mkdtemp(prefix="hung-offline-")
    port = free_port()
    with open(folder + "/mosquitto.conf", "w") as f:
        f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\n")
    broker = subprocess.Popen(["mosquitto", "-c", folder + "/mosquitto.conf"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    clients, stopped = [], {}
    watcher = None
    try:
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if time.time() > deadline:
                    raise SystemExit("mosquitto did not start")
                time.sleep(0.05)
        watcher = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-q", "1", "-t", "hung/#", "-F", "%t\t%p"],
                                   stdout=subprocess.PIPE, text=True, bufsize=1)
        delays = {}

        def watch():   # stamps each will as it arrives
            for line in watcher.stdout:
                topic, _, payload = line.rstrip("\n").partition("\t")
                i = int(topic.split("/")[1])
                if payload == "offline" and i in stopped and i not in delays:
                    delays[i] = time.time() - stopped[i]
        threading.Thread(target=watch, daemon=True).start()
        for i in range(N):
            clients.append(subprocess.Popen(
                ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-k", str(KEEPALIVE), "-i", f"hung-{i}", "-t", "nothing/here",
                 "--will-topic", f"hung/{i}", "--will-payload", "offline", "--will-qos", "1", "--will-retain"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(1.5 + KEEPALIVE)   # every client through at least one ping
        for i, c in enumerate(clients):
            c.send_signal(signal.SIGSTOP)
            stopped[i] = time.time()
            time.sleep(KEEPALIVE / N)
        end = time.time() + 3 * KEEPALIVE + 15
        while len(delays) < N and time.time() < end:
            time.sleep(0.1)
        values = sorted(delays.values())
        for i in range(N):
            print(f"client {i}: offline {delays[i]:.1f} s after it hung" if i in delays else f"client {i}: no will within the wait")
        ok = len(values) == N and values[-1] <= BAR
        p50 = values[len(values) // 2] if values else float("nan")
        worst = values[-1] if values else float("nan")
        print(("PASS: " if ok else "FAIL: ") + f"keepalive {KEEPALIVE} s, {N} hung clients: offline p50 {p50:.1f} s, max {worst:.1f} s "
              f"(bound floor(1.5 x {KEEPALIVE}) + 7 = {int(1.5 * KEEPALIVE) + 7} s; bar {BAR:g} s)")
        print(f"{int(ok)} passed, {int(not ok)} failed")
        return 0 if ok else 1
    finally:
        for c in clients:
            c.send_signal(signal.SIGCONT)
            c.terminate()
            c.wait(5)
        if watcher:
            watcher.terminate()
            watcher.wait(5)
        broker.terminate()
        broker.wait(5)


if __name__ == "__main__":
    sys.exit(main())
