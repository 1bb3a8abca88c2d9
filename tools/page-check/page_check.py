#!/usr/bin/env python3
"""The bridge's page in a real browser (Debian's headless chromium, through cdp.py): loads the
page of a running `fallguard run` (the demo), sees the live plot's values change and how often
it is updated, the fall's countdown, the incident in the list; opens the incident, labels it,
reloads and sees the label. Saves screenshots. Prints one JSON object with what it measured;
exits 1 with the reason when a step fails.

    page_check.py --url http://127.0.0.1:PORT/ --screenshots DIR [--password P] [--label fall]
"""
import argparse, json, os, statistics, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser, BrowserError


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--screenshots", required=True)
    ap.add_argument("--password")
    ap.add_argument("--label", default="fall", choices=["fall", "no-fall", "unsure"])
    ap.add_argument("--rate-seconds", type=float, default=5.0)
    ap.add_argument("--fall-timeout", type=float, default=45.0)
    ap.add_argument("--live-only", action="store_true", help="only the live plot: rate and delay, for --rate-seconds")
    ap.add_argument("--marks", help="touch MARKS.start when the page is loaded and updating, MARKS.end when the rate window ends")
    a = ap.parse_args()
    os.makedirs(a.screenshots, exist_ok=True)
    result = {"steps": []}
    b = Browser()
    try:
        t0 = time.monotonic()
        b.navigate(a.url)
        if a.password is not None:
            b.wait_for("document.querySelector('input[name=password]') !== null", 10)
            b.events = [e for e in b.events if e.get("method") != "Page.loadEventFired"]
            b.evaluate("document.querySelector('input[name=password]').value = %s; document.querySelector('form').submit(); true" % json.dumps(a.password))
            b.wait_event("Page.loadEventFired", 15)
            result["steps"].append("signed in")
        b.wait_for("window.fallguard && window.fallguard.updates >= 2", 15)
        result["first_update_s"] = round(time.monotonic() - t0, 2)
        # The live values change, and how often the plot is updated.
        values = set()
        if a.marks:
            open(a.marks + ".start", "w").close()
        u0 = b.evaluate("window.fallguard.updates")
        start = time.monotonic()
        while time.monotonic() - start < a.rate_seconds:
            values.add(b.evaluate("window.fallguard.lastValue"))
            b.pump(0.1)
        u1 = b.evaluate("window.fallguard.updates")
        elapsed = time.monotonic() - start
        if a.marks:
            open(a.marks + ".end", "w").close()
        result["updates_per_second"] = round((u1 - u0) / elapsed, 2)
        result["distinct_values"] = len(values)
        lat = b.evaluate("window.fallguard.latencies")
        lat_sorted = sorted(lat)
        result["delay_ms"] = {"samples": len(lat), "median": statistics.median(lat) if lat else None,
                              "p95": lat_sorted[int(0.95 * (len(lat) - 1))] if lat else None, "max": max(lat) if lat else None}
        if len(values) < 2:
            raise BrowserError(f"the live value did not change over {a.rate_seconds} s: {values}")
        result["steps"].append("live values change")
        if a.live_only:
            b.screenshot(os.path.join(a.screenshots, "page-live.png"))
            return finish(result, b)
        # The demo's fall: its countdown with seconds left.
        state = b.wait_for("(t => /Countdown: \\d+ s left/.test(t) && t)(document.getElementById('state').textContent)", a.fall_timeout)
        result["countdown_text"] = state
        result["steps"].append("countdown shown")
        b.screenshot(os.path.join(a.screenshots, "page-countdown.png"))
        # The incident in the list, then its page.
        incident = b.wait_for("(r => r && r.dataset.incident)(document.querySelector('#incidents tr[data-incident]'))", 15)
        result["incident"] = incident
        b.navigate(a.url.rstrip("/") + "/incidents/" + incident)
        try:
            result["plot"] = b.wait_for("location.pathname.endsWith('/incidents/%s') && document.querySelectorAll('#signal svg path').length > 0" % incident, 10)
        except BrowserError:
            raise BrowserError("the incident page has no signal plot: " + str(b.evaluate("location.href + ' ' + document.body.innerText.slice(0, 400)")))
        b.events = [e for e in b.events if e.get("method") != "Page.loadEventFired"]
        b.evaluate("document.getElementById('label-%s').click(); true" % a.label)
        b.wait_event("Page.loadEventFired", 15)
        b.navigate(a.url.rstrip("/") + "/incidents/" + incident)   # a reload, from the server
        label = b.wait_for("location.pathname.endsWith('/incidents/%s') && document.getElementById('label') && document.getElementById('label').textContent" % incident, 10)
        result["label_after_reload"] = label
        if not label.startswith(a.label + " by web page"):
            raise BrowserError(f"after the reload the label reads {label!r}")
        result["steps"].append("labelled and reloaded")
        b.screenshot(os.path.join(a.screenshots, "page-incident.png"))
        b.navigate(a.url)
        b.wait_for("window.fallguard && window.fallguard.updates >= 1", 15)
        listed = b.wait_for("(r => r && r.querySelector('.label').textContent)(document.querySelector('#incidents tr[data-incident=\"%s\"]'))" % incident, 10)
        result["label_in_list"] = listed
        b.screenshot(os.path.join(a.screenshots, "page-now.png"))
        return finish(result, b)
    except BrowserError as e:
        result["error"] = str(e)
        try:
            b.screenshot(os.path.join(a.screenshots, "page-failure.png"))
        except Exception:
            pass
        result["console_errors"] = b.console_errors
        print(json.dumps(result))
        return 1
    finally:
        b.close()


def finish(result, b):
    result["console_errors"] = b.console_errors
    print(json.dumps(result))
    return 1 if b.console_errors else 0


if __name__ == "__main__":
    sys.exit(main())
