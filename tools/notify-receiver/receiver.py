#!/usr/bin/env python3
"""A loopback HTTP receiver for FallGuard's notifiers: a Twilio-compatible API and a webhook sink.

Listens on 127.0.0.1 only. Every request is appended to --log as one JSON line:
  {"t": unix time, "method", "path", "headers": {...}, "body": text, "status": answered,
   "auth_ok": bool|null, "signature_ok": bool|null, "form": {...}|null}

Twilio-compatible: POST /2010-04-01/Accounts/<sid>/Messages.json and Calls.json, form encoded,
basic auth checked against --twilio-sid/--twilio-token (401 otherwise), answered 201 with a
JSON "sid"; --reject-to NUMBER answers 400 (Twilio code 21211) for that To.
Webhooks (any other path): X-FallGuard-Signature checked against --hmac-secret (401 when it is
wrong or missing), answered 200.
--fail-first N answers the first N requests 503; --fail-path-prefix limits that to some paths.
"""
import argparse, base64, hashlib, hmac, json, os, signal, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

args = None
lock = threading.Lock()
counter = {"requests": 0, "failed": 0}
log_file = None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, status, body, content_type="application/json"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        body = raw.decode("utf-8", "replace")
        now = time.time()
        entry = {"t": now, "method": "POST", "path": self.path, "headers": {k: v for k, v in self.headers.items()},
                 "body": body, "auth_ok": None, "signature_ok": None, "form": None}
        twilio = self.path.startswith("/2010-04-01/")
        with lock:
            counter["requests"] += 1
            fail_now = counter["failed"] < args.fail_first and self.path.startswith(args.fail_path_prefix)
            if fail_now:
                counter["failed"] += 1
        if args.delay_ms:
            time.sleep(args.delay_ms / 1000)
        if fail_now:
            status, reply = 503, json.dumps({"message": "try again later"})
        elif twilio:
            status, reply = self.twilio(raw, entry)
        else:
            status, reply = self.webhook(raw, entry)
        entry["status"] = status
        with lock:
            log_file.write(json.dumps(entry) + "\n")
            log_file.flush()
        self.answer(status, reply)

    def twilio(self, raw, entry):
        form = {k: v[0] for k, v in parse_qs(raw.decode(), keep_blank_values=True).items()}
        entry["form"] = form
        expected = "Basic " + base64.b64encode(f"{args.twilio_sid}:{args.twilio_token}".encode()).decode()
        entry["auth_ok"] = self.headers.get("Authorization") == expected
        parts = self.path.split("/")
        if not entry["auth_ok"] or len(parts) != 5 or parts[3] != args.twilio_sid:
            return 401, json.dumps({"code": 20003, "message": "Authenticate"})
        if parts[4] not in ("Messages.json", "Calls.json"):
            return 404, json.dumps({"code": 20404, "message": "not found"})
        if form.get("To") in args.reject_to:
            return 400, json.dumps({"code": 21211, "message": f"The 'To' number {form.get('To')} is not a valid phone number."})
        prefix = "SM" if parts[4] == "Messages.json" else "CA"
        return 201, json.dumps({"sid": prefix + hashlib.sha1(raw).hexdigest()[:32], "status": "queued"})

    def webhook(self, raw, entry):
        if args.hmac_secret is None:
            return 200, json.dumps({"ok": True})
        mac = hmac.new(args.hmac_secret.encode(), raw, hashlib.sha256).hexdigest()
        entry["signature_ok"] = hmac.compare_digest(self.headers.get("X-FallGuard-Signature", ""), "sha256=" + mac)
        return (200, json.dumps({"ok": True})) if entry["signature_ok"] else (401, json.dumps({"error": "bad signature"}))


def main():
    global args, log_file
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file", help="write the port here once listening")
    p.add_argument("--log", required=True)
    p.add_argument("--twilio-sid", default="AC0123456789abcdef0123456789abcdef")
    p.add_argument("--twilio-token", default="test-token")
    p.add_argument("--reject-to", action="append", default=[])
    p.add_argument("--hmac-secret")
    p.add_argument("--fail-first", type=int, default=0)
    p.add_argument("--fail-path-prefix", default="/")
    p.add_argument("--delay-ms", type=int, default=0)
    args = p.parse_args()
    # A parent may have started us with signals blocked (Foundation's Process does): unblock.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    log_file = open(args.log, "a")
    ThreadingHTTPServer.allow_reuse_address = True
    ThreadingHTTPServer.request_queue_size = 256
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(server.server_address[1]))
        os.rename(tmp, args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
