#!/usr/bin/env python3
"""HTTP(S) attack clients for bench/attack-page.sh (issue 28), standard library only.

  attack_http.py guess URL --from ADDR --count N --password P [--form] [--last RIGHT]
      N wrong passwords (HTTP Basic on URL, or the login form with --form) from ADDR, then
      optionally the right one; prints JSON: the status of each and the time taken.
  attack_http.py hold HOST PORT --from ADDR --seconds S [--tls]
      keeps connections open without a session for S seconds: idle ones (no byte sent),
      half-sent requests, and /live requests without a cookie, each reopened as soon as the
      server closes it; prints JSON: how many were opened and how many the server closed.
  attack_http.py owner URL --from ADDR --seconds S --password P
      meanwhile, once a second, what the owner gets: /metrics with the password (2 s limit);
      prints JSON: answered / tried and the slowest answer.
"""
import argparse, base64, http.client, json, selectors, socket, ssl, sys, time, urllib.parse


def context():
    c = ssl.create_default_context()
    c.check_hostname = False
    c.verify_mode = ssl.CERT_NONE
    return c


def request(url, source, method="GET", headers=None, body=None, timeout=3.0):
    u = urllib.parse.urlsplit(url)
    cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
    extra = {"context": context()} if u.scheme == "https" else {}
    conn = cls(u.hostname, u.port, timeout=timeout, source_address=(source, 0), **extra)
    try:
        conn.request(method, u.path or "/", body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def guess(a):
    statuses = []
    t0 = time.monotonic()
    tries = [f"guess-{i}" for i in range(a.count)] + ([a.last] if a.last else [])
    for pw in tries:
        if a.form:
            body = urllib.parse.urlencode({"password": pw})
            s, _ = request(a.url, a.source, "POST", {"Content-Type": "application/x-www-form-urlencoded"}, body)
        else:
            auth = base64.b64encode(f"prometheus:{pw}".encode()).decode()
            s, _ = request(a.url, a.source, headers={"Authorization": "Basic " + auth})
        statuses.append(s)
    elapsed = time.monotonic() - t0
    wrong = statuses[:a.count]
    print(json.dumps({"wrong": {str(k): wrong.count(k) for k in sorted(set(wrong))},
                      "last": statuses[a.count] if a.last else None, "seconds": round(elapsed, 2)}))


def hold(a):
    sel = selectors.DefaultSelector()
    kinds = ["idle"] * 20 + ["half"] * 20 + ["live"] * 10
    opened = closed = 0
    socks = {}

    def open_one(kind):
        nonlocal opened
        s = socket.socket()
        s.bind((a.source, 0))
        s.settimeout(2)
        try:
            s.connect((a.host, a.port))
            if kind != "idle":
                if a.tls:
                    s = context().wrap_socket(s)
                text = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" if kind == "half" else \
                    "GET /live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                s.sendall(text.encode())
        except OSError:
            s.close()
            return
        s.setblocking(False)
        opened += 1
        socks[s] = kind
        sel.register(s, selectors.EVENT_READ, kind)

    for k in kinds:
        open_one(k)
    end = time.monotonic() + a.seconds
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.2):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except ssl.SSLWantReadError:
                continue
            except OSError:
                data = b""
            if not data:
                closed += 1
                sel.unregister(s)
                kind = socks.pop(s)
                s.close()
                time.sleep(0.01)   # at most about 100 new connections a second
                open_one(kind)
    for s in list(socks):
        s.close()
    print(json.dumps({"opened": opened, "closed_by_server": closed}))


def owner(a):
    answered, slowest, tried, failures = 0, 0.0, 0, {}
    auth = base64.b64encode(f"prometheus:{a.password}".encode()).decode()
    end = time.monotonic() + a.seconds
    while time.monotonic() < end:
        tried += 1
        t0 = time.monotonic()
        try:
            s, _ = request(a.url, a.source, headers={"Authorization": "Basic " + auth}, timeout=2)
            if s == 200:
                answered += 1
                slowest = max(slowest, time.monotonic() - t0)
            else:
                failures[str(s)] = failures.get(str(s), 0) + 1
        except (OSError, http.client.HTTPException) as e:
            failures[type(e).__name__] = failures.get(type(e).__name__, 0) + 1
        time.sleep(max(0.0, 1 - (time.monotonic() - t0)))
    print(json.dumps({"answered": answered, "tried": tried, "slowest_s": round(slowest, 3), "failures": failures}))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("guess")
    g.add_argument("url"); g.add_argument("--from", dest="source", default="127.0.0.1")
    g.add_argument("--count", type=int, default=100); g.add_argument("--form", action="store_true")
    g.add_argument("--last"); g.add_argument("--password")
    h = sub.add_parser("hold")
    h.add_argument("host"); h.add_argument("port", type=int); h.add_argument("--from", dest="source", default="127.0.0.1")
    h.add_argument("--seconds", type=float, default=12); h.add_argument("--tls", action="store_true")
    o = sub.add_parser("owner")
    o.add_argument("url"); o.add_argument("--from", dest="source", default="127.0.0.1")
    o.add_argument("--seconds", type=float, default=10); o.add_argument("--password", required=True)
    a = p.parse_args()
    {"guess": guess, "hold": hold, "owner": owner}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
