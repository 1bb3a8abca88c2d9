"""A small driver for Debian's chromium through its DevTools protocol over a pipe
(--remote-debugging-pipe: commands on fd 3, answers on fd 4, NUL-terminated JSON). Standard
library only: no Selenium, no websocket package."""
import base64, json, os, select, shutil, subprocess, tempfile, time


class BrowserError(Exception):
    pass


class Browser:
    def __init__(self, width=1100, height=1500, binary=None, extra_args=()):
        binary = binary or shutil.which("chromium") or shutil.which("chromium-browser")
        if not binary:
            raise BrowserError("chromium is not installed (apt install chromium)")
        self.profile = tempfile.mkdtemp(prefix="fg-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def fds():   # in the child: its ends as fd 3 and 4 (through fresh copies: they may be 3 or 4 already)
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                "--disable-dev-shm-usage", "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
                f"--window-size={width},{height}", *extra_args, "about:blank"]
        self.proc = subprocess.Popen(args, preexec_fn=fds,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     close_fds=False)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events = []
        self.console_errors = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            self.call(domain, session=True)

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if not ready:
                return None
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed its pipe (exit %s)" % self.proc.poll())
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def _event(self, message):
        method = message.get("method")
        params = message.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            self.console_errors.append("exception: " + str(d.get("exception", {}).get("description") or d.get("text")))
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.console_errors.append("console.error: " + " ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            e = params["entry"]
            self.console_errors.append(f"{e.get('source')}: {e.get('text')} {e.get('url', '')}")
        self.events.append(message)

    def call(self, method, params=None, session=False, timeout=30):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply is None:
                raise BrowserError(f"{method}: no answer in {timeout} s")
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._event(reply)

    def wait_event(self, method, timeout=30):
        deadline = time.monotonic() + timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                del self.events[i]
                return e
        while True:
            m = self._read_message(deadline)
            if m is None:
                raise BrowserError(f"no {method} in {timeout} s")
            if m.get("method") == method:
                self._event(m)
                self.events.remove(m)
                return m
            self._event(m)

    def navigate(self, url, timeout=30):
        self.events = [e for e in self.events if e.get("method") != "Page.loadEventFired"]
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_event("Page.loadEventFired", timeout)

    def evaluate(self, expression, timeout=30, user_gesture=False):
        """user_gesture: as if a person clicked (what lets a page start its sound)."""
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True,
                                           "userGesture": user_gesture}, session=True, timeout=timeout)
        if "exceptionDetails" in r:
            raise BrowserError(f"{expression[:60]}: {r['exceptionDetails'].get('exception', {}).get('description')}")
        return r.get("result", {}).get("value")

    def wait_for(self, expression, timeout=30, interval=0.1):
        """Evaluates until the value is truthy; returns it."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                last = self.evaluate(expression)
            except BrowserError:
                last = None   # the page is between documents
            if last:
                return last
            self.pump(interval)
        raise BrowserError(f"waited {timeout} s for {expression!r} (last: {last!r})")

    def pump(self, seconds):
        """Reads events for a while (keeps the pipe drained)."""
        deadline = time.monotonic() + seconds
        while True:
            m = self._read_message(deadline)
            if m is None:
                return
            self._event(m)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path
