#!/usr/bin/env python3
"""Checks receiver.py's Twilio model: python3 tools/notify-receiver/test_receiver.py (standard library only)."""
import base64, json, os, re, shutil, subprocess, sys, tempfile, time, traceback
from datetime import datetime, timezone
from urllib.error import HTTPError
from urllib.parse import quote, urlencode
from urllib.request import Request, urlopen

HERE = os.path.dirname(os.path.abspath(__file__))
SID, TOKEN = "AC0123456789abcdef0123456789abcdef", "test-token"
AUTH = "Basic " + base64.b64encode(f"{SID}:{TOKEN}".encode()).decode()
API = f"/2010-04-01/Accounts/{SID}"
RFC2822 = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d \+0000$")
ANNA, BEN, CARA, DAN, EVE = "+447700900001", "+447700900002", "+447700900003", "+447700900004", "+447700900005"
FROM = "+15005550006"


class Receiver:
    def __init__(self, *extra):
        self.dir = tempfile.mkdtemp(prefix="notify-receiver-test.")
        self.log = os.path.join(self.dir, "requests.jsonl")
        port_file = os.path.join(self.dir, "port")
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "receiver.py"), "--port", "0", "--port-file", port_file,
                                      "--log", self.log, "--twilio-sid", SID, "--twilio-token", TOKEN, *extra])
        deadline = time.time() + 20
        while not os.path.exists(port_file):
            assert self.proc.poll() is None and time.time() < deadline, "receiver did not start"
            time.sleep(0.02)
        self.base = "http://127.0.0.1:" + open(port_file).read()

    def request(self, method, path, form=None, json_body=None, auth=True):
        data, headers = None, {}
        if form is not None:
            data, headers["Content-Type"] = urlencode(form).encode(), "application/x-www-form-urlencoded"
        if json_body is not None:
            data, headers["Content-Type"] = json.dumps(json_body).encode(), "application/json"
        if auth:
            headers["Authorization"] = AUTH
        try:
            with urlopen(Request(self.base + path, data=data, headers=headers, method=method), timeout=10) as r:
                return r.status, json.loads(r.read())
        except HTTPError as e:
            return e.code, json.loads(e.read())

    def lines(self):
        return [json.loads(l) for l in open(self.log)] if os.path.exists(self.log) else []

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


results = {"passed": 0, "failed": 0}


def check(name, fn):
    try:
        fn()
        results["passed"] += 1
        print("ok  ", name)
    except Exception:
        results["failed"] += 1
        print("FAIL", name)
        traceback.print_exc()


def today():
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


def main():
    r = Receiver("--reject-to", "+15550000000", "--call-script", f"{BEN}=ringing@0.3,no-answer@1", "--hmac-secret", "s3cret")
    try:
        run(r)
    finally:
        r.stop()
    r2 = Receiver("--fail-first", "1", "--fail-path-prefix", "/2010-04-01/")
    try:
        def fail_first_get():
            assert r2.request("GET", API + "/Messages.json")[0] == 503
            s, page = r2.request("GET", API + "/Messages.json")
            assert s == 200 and page["messages"] == [], (s, page)
            assert [l["status"] for l in r2.lines()] == [503, 200]
        check("--fail-first applies to GETs of /2010-04-01/", fail_first_get)
    finally:
        r2.stop()
    print(f"{results['passed']} passed, {results['failed']} failed")
    sys.exit(1 if results["failed"] else 0)


def run(r):
    # Calls first: they move with time while the message checks run.
    t0 = time.time()
    default_call = r.request("POST", API + "/Calls.json", form={"From": FROM, "To": ANNA, "Url": "http://x/twiml", "MachineDetection": "Enable"})
    first_get = r.request("GET", f"{API}/Calls/{default_call[1]['sid']}.json")
    scripted_call = r.request("POST", API + "/Calls.json", form={"From": FROM, "To": BEN, "Url": "http://x/twiml"})
    set_script = r.request("POST", "/_test/call-script", json_body={"to": CARA, "script": "completed@1/machine_start"}, auth=False)
    t_runtime = time.time()
    runtime_call = r.request("POST", API + "/Calls.json", form={"From": FROM, "To": CARA, "Url": "http://x/twiml"})
    samples = {}

    def sample(at):
        time.sleep(max(0, t0 + at - time.time()))
        samples[at] = r.request("GET", f"{API}/Calls/{default_call[1]['sid']}.json")

    def call_created():
        for s, c in (default_call, scripted_call, runtime_call):
            assert s == 201, (s, c)
            assert re.fullmatch(r"CA[0-9a-f]{32}", c["sid"]) and c["status"] == "queued", c
            assert c["answered_by"] is None and c["end_time"] is None and c["duration"] is None, c
            assert RFC2822.match(c["date_created"]) and c["account_sid"] == SID and c["from"] == FROM, c
        assert default_call[1]["machine_detection"] == "Enable" and scripted_call[1]["machine_detection"] is None
        assert first_get[0] == 200 and first_get[1]["status"] == "queued" and first_get[1]["start_time"] is None, first_get
        assert set_script == (200, {"to": CARA, "script": "completed@1/machine_start"}), set_script
    check("call create answers 201 queued with Twilio fields", call_created)

    # Messages: two outbound, one inbound now, one inbound two days ago.
    def messages():
        s1, m1 = r.request("POST", API + "/Messages.json", form={"From": FROM, "To": ANNA, "Body": "FALL ALERT: hello"})
        s2, m2 = r.request("POST", API + "/Messages.json", form={"From": FROM, "To": DAN, "Body": "FALL ALERT: hello"})
        assert s1 == s2 == 201, (s1, m1)
        assert re.fullmatch(r"SM[0-9a-f]{32}", m1["sid"]) and m1["sid"] != m2["sid"], (m1, m2)  # same body, unique sids
        assert m1["status"] == "queued" and m1["direction"] == "outbound-api" and m1["body"] == "FALL ALERT: hello", m1
        assert m1["from"] == FROM and m1["to"] == ANNA and m1["account_sid"] == SID, m1
        for k in ("date_created", "date_updated", "date_sent"):
            assert RFC2822.match(m1[k]), (k, m1[k])
        si, inbound = r.request("POST", "/_test/inbound", json_body={"from": ANNA, "to": FROM, "body": "OK"}, auth=False)
        so, old = r.request("POST", "/_test/inbound", json_body={"from": ANNA, "to": FROM, "body": "old", "date_sent": time.time() - 2 * 86400}, auth=False)
        assert si == so == 201 and inbound["direction"] == "inbound" and inbound["status"] == "received", inbound
        assert re.fullmatch(r"SM[0-9a-f]{32}", inbound["sid"]), inbound

        s, page = r.request("GET", API + "/Messages.json")
        assert s == 200 and page["page"] == 0 and page["page_size"] == 50 and page["next_page_uri"] is None, page
        assert page["uri"] == API + "/Messages.json" and page["first_page_uri"].startswith(API + "/Messages.json?"), page
        assert [m["sid"] for m in page["messages"]][-1] == old["sid"], "oldest last"
        assert {m["sid"] for m in page["messages"]} == {m1["sid"], m2["sid"], inbound["sid"], old["sid"]}

        s, page = r.request("GET", API + "/Messages.json?To=" + quote(ANNA, safe=""))
        assert s == 200 and [m["sid"] for m in page["messages"]] == [m1["sid"]], page
        s, page = r.request("GET", API + "/Messages.json?From=" + quote(ANNA, safe=""))
        assert s == 200 and [m["sid"] for m in page["messages"]] == [inbound["sid"], old["sid"]], page
        assert page["messages"][0]["direction"] == "inbound", page
        # DateSent>=today, URL-encoded as Twilio's clients send it: the two-day-old message is left out.
        s, page = r.request("GET", API + "/Messages.json?From=" + quote(ANNA, safe="") + "&DateSent%3E=" + today())
        assert s == 200 and [m["sid"] for m in page["messages"]] == [inbound["sid"]], page
        s, page = r.request("GET", API + "/Messages.json?DateSent%3E=" + today())
        assert {m["sid"] for m in page["messages"]} == {m1["sid"], m2["sid"], inbound["sid"]}, page
        # On or before yesterday: only the old one; DateSent= a datetime; PageSize.
        yesterday = datetime.fromtimestamp(time.time() - 86400, timezone.utc).strftime("%Y-%m-%d")
        s, page = r.request("GET", API + "/Messages.json?DateSent%3C=" + yesterday)
        assert [m["sid"] for m in page["messages"]] == [old["sid"]], page
        after = datetime.fromtimestamp(time.time() - 3600, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        s, page = r.request("GET", API + "/Messages.json?To=" + quote(DAN, safe="") + "&DateSent%3E=" + after)
        assert [m["sid"] for m in page["messages"]] == [m2["sid"]], page
        s, page = r.request("GET", API + "/Messages.json?PageSize=2")
        assert len(page["messages"]) == 2 and page["page_size"] == 2, page
        assert r.request("GET", API + "/Messages.json?DateSent%3E=25-11-2026")[0] == 400
        s, one = r.request("GET", f"{API}/Messages/{m1['sid']}.json")
        assert s == 200 and one == m1, one
    check("messages: create, inject inbound, list with To/From/DateSent>=/<=/PageSize", messages)

    def auth_and_404():
        s, body = r.request("GET", API + "/Messages.json", auth=False)
        assert s == 401 and body["code"] == 20003, body
        s, body = r.request("GET", f"{API}/Calls/{default_call[1]['sid']}.json", auth=False)
        assert s == 401, body
        missing = f"{API}/Calls/CA{'0' * 32}.json"
        s, body = r.request("GET", missing)
        assert s == 404 and body["code"] == 20404 and body["status"] == 404 and missing in body["message"], body
    check("GET: 401 without auth, 404 for an unknown call", auth_and_404)

    def reject_to():
        s, body = r.request("POST", API + "/Messages.json", form={"From": FROM, "To": "+15550000000", "Body": "x"})
        assert s == 400 and body["code"] == 21211, body
        s, body = r.request("POST", API + "/Calls.json", form={"From": FROM, "To": "+15550000000", "Url": "http://x"})
        assert s == 400 and body["code"] == 21211, body
    check("--reject-to answers 400 code 21211", reject_to)

    def bad_scripts():
        for script in ("ringing", "ringing@x", "bogus@1", "ringing@2,busy@1", "ringing@1/human,busy@2", "completed@1/robot"):
            s, body = r.request("POST", "/_test/call-script", json_body={"to": EVE, "script": script}, auth=False)
            assert s == 400, (script, s, body)
    check("malformed call scripts are refused", bad_scripts)

    for at in (1.0, 2.0):
        sample(at)
    time.sleep(max(0, t0 + 3.1 - time.time()))
    sample(3.2)

    def default_script():
        statuses = [samples[at][1]["status"] for at in (1.0, 2.0, 3.2)]
        assert statuses == ["ringing", "in-progress", "completed"], statuses
        ringing, in_progress, done = (samples[at][1] for at in (1.0, 2.0, 3.2))
        assert ringing["start_time"] and ringing["answered_by"] is None and ringing["end_time"] is None, ringing
        assert in_progress["answered_by"] is None and in_progress["duration"] is None, in_progress
        assert done["answered_by"] == "human" and done["duration"] == "1" and RFC2822.match(done["end_time"]), done
        assert done["machine_detection"] == "Enable", done
    check("default script: queued -> ringing -> in-progress -> completed/human", default_script)

    def command_line_script():
        s, c = r.request("GET", f"{API}/Calls/{scripted_call[1]['sid']}.json")
        assert s == 200 and c["status"] == "no-answer" and c["answered_by"] is None, c
        assert c["duration"] == "0" and RFC2822.match(c["end_time"]) and RFC2822.match(c["start_time"]), c
    check("--call-script NUMBER=ringing@0.3,no-answer@1: no-answer, answered_by null", command_line_script)

    def runtime_script():
        assert time.time() - t_runtime > 1.2
        s, c = r.request("GET", f"{API}/Calls/{runtime_call[1]['sid']}.json")
        assert s == 200 and c["status"] == "completed" and c["answered_by"] == "machine_start", c
        assert c["duration"] == "0", c
        # A script applies only to calls created after it: reset Cara to the default, new call queued/ringing.
        assert r.request("POST", "/_test/call-script", json_body={"to": CARA, "script": None}, auth=False)[0] == 200
        s, c2 = r.request("POST", API + "/Calls.json", form={"From": FROM, "To": CARA, "Url": "http://x"})
        time.sleep(0.7)
        assert r.request("GET", f"{API}/Calls/{c2['sid']}.json")[1]["status"] == "ringing"
        assert r.request("GET", f"{API}/Calls/{runtime_call[1]['sid']}.json")[1]["answered_by"] == "machine_start"
    check("runtime /_test/call-script completed@1/machine_start", runtime_script)

    def log_lines():
        lines = r.lines()
        assert lines and not any(l["path"].startswith("/_test/") for l in lines), "no /_test/ lines"
        keys = {"t", "method", "path", "headers", "body", "status", "auth_ok", "signature_ok", "form"}
        for l in lines:
            assert keys <= set(l), l
        gets = [l for l in lines if l["method"] == "GET"]
        assert gets and all(l["body"] == "" and l["form"] is None and l["signature_ok"] is None and isinstance(l["query"], dict) for l in gets)
        ge = [l for l in gets if "DateSent%3E=" in l["path"] and "From=" in l["path"]]
        assert ge and ge[0]["query"] == {"From": ANNA, "DateSent>": today()} and ge[0]["status"] == 200 and ge[0]["auth_ok"] is True, ge
        assert any(l["status"] == 401 and l["auth_ok"] is False for l in gets)
        posts = [l for l in lines if l["method"] == "POST"]
        assert all("query" not in l for l in posts)
        call = next(l for l in posts if l["path"].endswith("/Calls.json") and l["form"].get("To") == ANNA)
        assert call["form"]["MachineDetection"] == "Enable" and call["status"] == 201 and call["auth_ok"] is True, call
    check("log: GETs with method and query, POST lines unchanged, no /_test/ lines", log_lines)

    def webhook_still_works():
        import hashlib, hmac
        body = b'{"alert":"fall"}'
        sig = "sha256=" + hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
        req = Request(r.base + "/hook", data=body, headers={"X-FallGuard-Signature": sig, "Content-Type": "application/json"})
        with urlopen(req, timeout=10) as resp:
            assert resp.status == 200
        assert r.lines()[-1]["signature_ok"] is True and r.lines()[-1]["path"] == "/hook"
        assert r.request("GET", "/anything")[0] == 404
    check("webhooks unchanged", webhook_still_works)


if __name__ == "__main__":
    main()
