#!/usr/bin/env python3
"""A loopback HTTP receiver for FallGuard's notifiers: a Twilio-compatible API and a webhook sink.

Listens on 127.0.0.1 only. Every request except /_test/... is appended to --log as one JSON line:
  {"t": unix time, "method", "path" (with the query string), "headers": {...}, "body": text,
   "status": answered, "auth_ok": bool|null, "signature_ok": bool|null, "form": {...}|null}
GET lines have "body": "", "signature_ok": null, "form": null and also "query": {name: first value}.

Twilio-compatible API (basic auth checked against --twilio-sid/--twilio-token, 401 code 20003
otherwise; JSON in Twilio's snake_case field names; dates RFC 2822 in UTC, "Wed, 25 Nov 2026
16:00:00 +0000"; sids "SM"/"CA" + 32 hex, a hash of the body and a counter, so unique):
  POST /2010-04-01/Accounts/<sid>/Messages.json   form From, To, Body: stores an outbound message
       (direction "outbound-api", status "queued", date_created/date_updated/date_sent now) and
       answers 201 with it.
  POST /2010-04-01/Accounts/<sid>/Calls.json      form From, To, [MachineDetection]: stores a call
       (machine_detection = MachineDetection or null) and answers 201 with it, status "queued".
       --reject-to NUMBER answers either create 400 (Twilio code 21211) for that To.
  GET  /2010-04-01/Accounts/<sid>/Calls/<CallSid>.json        the call at its current status, 200.
  GET  /2010-04-01/Accounts/<sid>/Messages/<MessageSid>.json  one message, 200.
       Unknown sid: 404 {"code": 20404, "message": "The requested resource <path> was not found"}.
  GET  /2010-04-01/Accounts/<sid>/Messages.json   the stored messages (outbound and injected
       inbound), newest date_sent first, filtered by the query parameters (as Twilio spells them):
         To, From          exact match (note: a literal "+" in a query means a space; send %2B)
         DateSent=D        sent on D           DateSent>=D  (arrives as DateSent%3E=D) on or after D
         DateSent<=D       on or before D      D is YYYY-MM-DD (a whole UTC day) or YYYY-MM-DDTHH:MM:SSZ
         PageSize=N        at most N messages (default 50, 1..1000); no further pages
       200 {"messages": [...], "start": 0, "end": index of the last one (0 when none), "page": 0,
       "page_size": N, "first_page_uri", "next_page_uri": null, "previous_page_uri": null,
       "uri": the request path}. A malformed date or PageSize answers 400 (code 20001).

Calls move with time since creation along a script chosen by their To number:
  default                ringing@0.5,in-progress@1.5,completed@2.5/human
  --call-script NUMBER=SCRIPT (repeatable), or at run time POST /_test/call-script
  {"to": NUMBER, "script": SCRIPT} (script null: back to the default); a script applies to calls
  created after it was set. SCRIPT is comma-separated status@seconds steps, seconds not decreasing,
  the last step may carry /answered_by, e.g. "ringing@0.5,no-answer@2", "busy@0.3",
  "ringing@0.5,in-progress@1,completed@3/machine_start". Statuses: queued initiated ringing
  in-progress completed busy failed no-answer canceled; answered_by: human unknown fax
  machine_start machine_end_beep machine_end_silence machine_end_other.
  The status at t seconds is that of the last step at or before t ("queued" before the first).
  start_time: when the first step is reached (null before). answered_by: null until the last step
  is reached, then its /answered_by, or "human" for completed, else null. When the last step is a
  final status (completed busy failed no-answer canceled) and is reached: end_time is set and
  duration is whole seconds spent in-progress as a string ("0" when never in-progress); a script
  ending in a non-final status leaves the call there (end_time and duration stay null).

Test control (no auth, never logged, never failed or delayed):
  POST /_test/inbound      {"from", "to", "body", "date_sent": unix time (default now)}: adds an
                           inbound message (direction "inbound", status "received"), 201 with it.
  POST /_test/call-script  {"to", "script"}: 200 {"to", "script"}; a malformed script 400.

Webhooks (POST to any other path): X-FallGuard-Signature checked against --hmac-secret (401 when
it is wrong or missing), answered 200. A GET of any other path answers 404 (and is logged).
--fail-first N answers the first N requests 503 (POSTs, and GETs of /2010-04-01/ paths, counted
together); --fail-path-prefix limits that to paths starting so; --delay-ms M waits M ms before
answering each of those requests.
"""
import argparse, base64, calendar, email.utils, hashlib, hmac, json, os, signal, sys, threading, time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

args = None
lock = threading.Lock()
counter = {"requests": 0, "failed": 0, "sids": 0}
log_file = None
messages = {}       # sid -> message dict (stored fields; see message_json)
calls = {}          # sid -> call dict (created, steps, ...; see call_json)
call_scripts = {}   # To number -> steps, for calls created from then on

API = "2010-04-01"
STATUSES = {"queued", "initiated", "ringing", "in-progress", "completed", "busy", "failed", "no-answer", "canceled"}
FINAL = {"completed", "busy", "failed", "no-answer", "canceled"}
ANSWERED_BY = {"human", "unknown", "fax", "machine_start", "machine_end_beep", "machine_end_silence", "machine_end_other"}


def parse_script(text):
    """'ringing@0.5,completed@3/human' -> [(status, seconds, answered_by|None), ...]; ValueError when malformed."""
    steps = []
    parts = [s.strip() for s in text.split(",")]
    for i, part in enumerate(parts):
        status, at, seconds = part.partition("@")
        if not at:
            raise ValueError(f"step {part!r}: expected status@seconds")
        seconds, _, answered_by = seconds.partition("/")
        if status not in STATUSES:
            raise ValueError(f"step {part!r}: unknown status {status!r}")
        try:
            t = float(seconds)
        except ValueError:
            raise ValueError(f"step {part!r}: seconds {seconds!r} is not a number") from None
        if not t >= 0 or (steps and t < steps[-1][1]):
            raise ValueError(f"step {part!r}: seconds must be >= 0 and not decreasing")
        if answered_by and i != len(parts) - 1:
            raise ValueError(f"step {part!r}: only the last step may carry /answered_by")
        if answered_by and answered_by not in ANSWERED_BY:
            raise ValueError(f"step {part!r}: unknown answered_by {answered_by!r}")
        steps.append((status, t, answered_by or None))
    return steps


DEFAULT_SCRIPT = parse_script("ringing@0.5,in-progress@1.5,completed@2.5/human")


def rfc2822(t):
    return None if t is None else email.utils.format_datetime(datetime.fromtimestamp(int(t), timezone.utc))


def new_sid(prefix, seed):
    """Under the lock: prefix + 32 hex, a hash of seed and a counter."""
    counter["sids"] += 1
    return prefix + hashlib.sha1(seed + b"#" + str(counter["sids"]).encode()).hexdigest()[:32]


def message_json(m):
    base = f"/{API}/Accounts/{m['account_sid']}/Messages/{m['sid']}"
    return {"account_sid": m["account_sid"], "api_version": API, "body": m["body"],
            "date_created": rfc2822(m["date_sent"]), "date_sent": rfc2822(m["date_sent"]),
            "date_updated": rfc2822(m["date_sent"]), "direction": m["direction"], "error_code": None,
            "error_message": None, "from": m["from"], "messaging_service_sid": None, "num_media": "0",
            "num_segments": "1", "price": None, "price_unit": "USD", "sid": m["sid"], "status": m["status"],
            "subresource_uris": {"media": base + "/Media.json"}, "to": m["to"], "uri": base + ".json"}


def call_json(c, now):
    steps, created = c["steps"], c["created"]
    elapsed = now - created
    reached = [s for s in steps if s[1] <= elapsed]
    status, changed = (reached[-1][0], created + reached[-1][1]) if reached else ("queued", created)
    last = steps[-1]
    done = bool(steps) and len(reached) == len(steps)
    answered_by = (last[2] or ("human" if last[0] == "completed" else None)) if done else None
    end_time = duration = None
    if done and last[0] in FINAL:
        end_time = created + last[1]
        answered_at = next((s[1] for s in steps if s[0] == "in-progress"), None)
        duration = "0" if answered_at is None else str(int(last[1] - answered_at + 0.5))
    base = f"/{API}/Accounts/{c['account_sid']}/Calls/{c['sid']}"
    return {"account_sid": c["account_sid"], "annotation": None, "answered_by": answered_by, "api_version": API,
            "caller_name": None, "date_created": rfc2822(created), "date_updated": rfc2822(changed),
            "direction": "outbound-api", "duration": duration, "end_time": rfc2822(end_time),
            "forwarded_from": None, "from": c["from"], "from_formatted": c["from"], "group_sid": None,
            "machine_detection": c["machine_detection"], "parent_call_sid": None, "phone_number_sid": None,
            "price": None, "price_unit": "USD", "queue_time": "0", "sid": c["sid"],
            "start_time": rfc2822(created + steps[0][1]) if reached else None, "status": status,
            "subresource_uris": {"recordings": base + "/Recordings.json", "notifications": base + "/Notifications.json"},
            "to": c["to"], "to_formatted": c["to"], "trunk_sid": None, "uri": base + ".json"}


def parse_when(value):
    """YYYY-MM-DD -> (start, end) of that UTC day; YYYY-MM-DDTHH:MM:SSZ -> (t, t + 1). ValueError otherwise."""
    for fmt, span in (("%Y-%m-%d", 86400), ("%Y-%m-%dT%H:%M:%SZ", 1)):
        try:
            start = calendar.timegm(time.strptime(value, fmt))
            return start, start + span
        except ValueError:
            pass
    raise ValueError(value)


def not_found(path):
    return 404, json.dumps({"code": 20404, "message": f"The requested resource {path} was not found",
                            "more_info": "https://www.twilio.com/docs/errors/20404", "status": 404})


def bad_request(message):
    return 400, json.dumps({"code": 20001, "message": message, "status": 400})


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
        if self.path.startswith("/_test/"):
            return self.answer(*self.test_control(raw))
        body = raw.decode("utf-8", "replace")
        entry = {"t": time.time(), "method": "POST", "path": self.path, "headers": {k: v for k, v in self.headers.items()},
                 "body": body, "auth_ok": None, "signature_ok": None, "form": None}
        twilio = self.path.startswith("/2010-04-01/")
        self.respond(entry, True, lambda: self.twilio(raw, entry) if twilio else self.webhook(raw, entry))

    def do_GET(self):
        if self.path.startswith("/_test/"):
            return self.answer(*not_found(self.path))
        query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query, keep_blank_values=True).items()}
        entry = {"t": time.time(), "method": "GET", "path": self.path, "headers": {k: v for k, v in self.headers.items()},
                 "body": "", "auth_ok": None, "signature_ok": None, "form": None, "query": query}
        twilio = self.path.startswith("/2010-04-01/")
        self.respond(entry, twilio, lambda: self.twilio_get(query, entry) if twilio else not_found(self.path))

    def respond(self, entry, counted, handle):
        """Counts the request towards --fail-first and --delay-ms (when counted), handles, logs, answers."""
        fail_now = False
        if counted:
            with lock:
                counter["requests"] += 1
                fail_now = counter["failed"] < args.fail_first and self.path.startswith(args.fail_path_prefix)
                if fail_now:
                    counter["failed"] += 1
            if args.delay_ms:
                time.sleep(args.delay_ms / 1000)
        if fail_now:
            status, reply = 503, json.dumps({"message": "try again later"})
        else:
            status, reply = handle()
        entry["status"] = status
        with lock:
            log_file.write(json.dumps(entry) + "\n")
            log_file.flush()
        self.answer(status, reply)

    def authorised(self, entry):
        expected = "Basic " + base64.b64encode(f"{args.twilio_sid}:{args.twilio_token}".encode()).decode()
        entry["auth_ok"] = self.headers.get("Authorization") == expected
        return entry["auth_ok"]

    def twilio(self, raw, entry):
        form = {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True).items()}
        entry["form"] = form
        parts = self.path.split("/")
        if not self.authorised(entry) or len(parts) != 5 or parts[3] != args.twilio_sid:
            return 401, json.dumps({"code": 20003, "message": "Authenticate"})
        if parts[4] not in ("Messages.json", "Calls.json"):
            return 404, json.dumps({"code": 20404, "message": "not found"})
        if form.get("To") in args.reject_to:
            return 400, json.dumps({"code": 21211, "message": f"The 'To' number {form.get('To')} is not a valid phone number."})
        now = time.time()
        with lock:
            if parts[4] == "Messages.json":
                m = {"sid": new_sid("SM", raw), "seq": counter["sids"], "account_sid": args.twilio_sid, "from": form.get("From"),
                     "to": form.get("To"), "body": form.get("Body"), "direction": "outbound-api",
                     "status": "queued", "date_sent": now}
                messages[m["sid"]] = m
                return 201, json.dumps(message_json(m))
            c = {"sid": new_sid("CA", raw), "account_sid": args.twilio_sid, "from": form.get("From"),
                 "to": form.get("To"), "machine_detection": form.get("MachineDetection"), "created": now,
                 "steps": call_scripts.get(form.get("To"), DEFAULT_SCRIPT)}
            calls[c["sid"]] = c
            return 201, json.dumps(call_json(c, now))

    def twilio_get(self, query, entry):
        path = urlsplit(self.path).path
        parts = path.split("/")
        if not self.authorised(entry) or len(parts) < 5 or parts[2] != "Accounts" or parts[3] != args.twilio_sid:
            return 401, json.dumps({"code": 20003, "message": "Authenticate"})
        if len(parts) == 6 and parts[4] in ("Calls", "Messages") and parts[5].endswith(".json"):
            sid = parts[5][:-5]
            with lock:
                if parts[4] == "Calls" and sid in calls:
                    return 200, json.dumps(call_json(calls[sid], time.time()))
                if parts[4] == "Messages" and sid in messages:
                    return 200, json.dumps(message_json(messages[sid]))
            return not_found(path)
        if len(parts) == 5 and parts[4] == "Messages.json":
            return self.message_list(path, query)
        return not_found(path)

    def message_list(self, path, query):
        try:
            page_size = int(query.get("PageSize", "50"))
            if not 1 <= page_size <= 1000:
                raise ValueError
        except ValueError:
            return bad_request(f"Invalid PageSize {query.get('PageSize')!r}: expected 1..1000")
        tests = []
        for name in ("To", "From"):
            if name in query:
                tests.append(lambda m, key=name.lower(), v=query[name]: m[key] == v)
        for name, test in (("DateSent", lambda t, s, e: s <= t < e), ("DateSent>", lambda t, s, e: t >= s),
                           ("DateSent<", lambda t, s, e: t < e)):
            if name in query:
                try:
                    start, end = parse_when(query[name])
                except ValueError:
                    return bad_request(f"Invalid {name} {query[name]!r}: expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ")
                tests.append(lambda m, test=test, s=start, e=end: test(int(m["date_sent"]), s, e))
        with lock:
            found = [m for m in messages.values() if all(t(m) for t in tests)]
            found.sort(key=lambda m: (int(m["date_sent"]), m["seq"]), reverse=True)
            page = [message_json(m) for m in found[:page_size]]
        first = {k: v for k, v in query.items() if k not in ("Page", "PageSize", "PageToken")}
        first.update(PageSize=page_size, Page=0)
        return 200, json.dumps({"messages": page, "end": max(0, len(page) - 1), "first_page_uri": path + "?" + urlencode(first),
                                "next_page_uri": None, "page": 0, "page_size": page_size, "previous_page_uri": None,
                                "start": 0, "uri": self.path})

    def test_control(self, raw):
        try:
            req = json.loads(raw or b"{}")
            if not isinstance(req, dict):
                raise ValueError("expected a JSON object")
            if self.path == "/_test/inbound":
                date_sent = float(req.get("date_sent", time.time()))
                with lock:
                    m = {"sid": new_sid("SM", raw), "seq": counter["sids"], "account_sid": args.twilio_sid, "from": req.get("from"),
                         "to": req.get("to"), "body": req.get("body"), "direction": "inbound",
                         "status": "received", "date_sent": date_sent}
                    messages[m["sid"]] = m
                    return 201, json.dumps(message_json(m))
            if self.path == "/_test/call-script":
                to, script = req.get("to"), req.get("script")
                if not isinstance(to, str):
                    raise ValueError("'to' must be a string")
                steps = None if script is None else parse_script(script)
                with lock:
                    if steps is None:
                        call_scripts.pop(to, None)
                    else:
                        call_scripts[to] = steps
                return 200, json.dumps({"to": to, "script": script})
        except (ValueError, TypeError) as e:
            return 400, json.dumps({"error": str(e)})
        return not_found(self.path)

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
    p.add_argument("--call-script", action="append", default=[], metavar="NUMBER=SCRIPT",
                   help="how calls to NUMBER go, e.g. +447700900001=ringing@0.5,no-answer@2 (repeatable)")
    p.add_argument("--hmac-secret")
    p.add_argument("--fail-first", type=int, default=0)
    p.add_argument("--fail-path-prefix", default="/")
    p.add_argument("--delay-ms", type=int, default=0)
    args = p.parse_args()
    for option in args.call_script:
        number, eq, script = option.partition("=")
        try:
            if not eq or not number:
                raise ValueError("expected NUMBER=SCRIPT")
            call_scripts[number] = parse_script(script)
        except ValueError as e:
            p.error(f"--call-script {option}: {e}")
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
