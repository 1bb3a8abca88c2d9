#!/usr/bin/env python3
"""Prints the bars of the kernel rig from the figures the guests wrote.

    report.py OUTDIR      (OUTDIR/<kernel release>/figures.jsonl, as guest-tests.py writes)

One line per bar and kernel; exit 0 when every bar present is met, 1 otherwise (2 when no
figures were found). The checks themselves are in guest-tests.py; this only reads their
figures again, so a bar can be re-read without booting.
"""
import glob
import json
import os
import sys


def main():
    out = sys.argv[1]
    files = sorted(glob.glob(os.path.join(out, "*", "figures.jsonl")))
    if not files:
        print(f"report: no figures under {out}")
        return 2
    ok = True
    for f in files:
        krel = os.path.basename(os.path.dirname(f))
        figs = [json.loads(l) for l in open(f) if l.strip()]
        print(f"== {krel}")
        for g in figs:
            c = g["check"]
            if c == "devices":
                print(f"  devices   {g['device']:8} {g['id']}: {g['mode']}, {g['rate']:g} Hz, scale {g['scale']}"
                      + (f", trigger {g['trigger']}" if g.get("trigger") else ""))
            elif c == "adxl345-polled-arrivals":
                met = g["over_bar"] == 0
                ok &= met
                print(f"  adxl345   watch --polled: {g['in_window']} polls at {g['captured_rate_hz']} Hz (driver "
                      f"{g['driver_rate_hz']:g} Hz) vs {g['fed']} fed: max {g['max_lsb']} LSB, torn {g['torn']}, "
                      f"read twice {g['repeated']}, missed {g['lost']} (free-running clocks)  {'MET' if met else 'NOT MET'}")
            elif c == "adxl345-record":
                met = g["over_bar"] == 0 and not g.get("off_schedule")
                ok &= met
                print(f"  adxl345   record: {g['rows_in_window']} rows at {g['captured_rate_hz']} Hz from "
                      f"{g['driver_rate_hz']:g} Hz polls, {g['fed']} samples fed: max {g['max_lsb']} LSB after "
                      f"alignment (bar 1), {g['over_bar']} over  {'MET' if met else 'NOT MET'}")
            elif c == "mpu6050-buffered":
                met = g.get("lost") == 0 and g.get("captured") == g["fired"] and g.get("over_bar") == 0
                ok &= met
                print(f"  mpu6050   buffered watch: fed {g['fired']} with one interrupt each at {g['fed_rate_hz']:g} Hz, "
                      f"captured {g.get('captured')}, lost {g.get('lost')}, max {g.get('max_lsb')} LSB, "
                      f"overruns {g.get('overruns')}  {'MET' if met else 'NOT MET'}")
            elif c == "mpu6050-record":
                met = g.get("lost") == 0 and g.get("over_bar") == 0
                ok &= met
                print(f"  mpu6050   record: {g['captured']} rows at {g['captured_rate_hz']} Hz, {g['fed']} fed at "
                      f"{g['fed_rate_hz']:g} Hz: lost {g['lost']}, max {g['max_lsb']} LSB  {'MET' if met else 'NOT MET'}")
            elif c == "gpio":
                met = len(g["pulses_ms"]) == 4 and g["press_to_event_ms"] is not None and g["lines_released"]
                ok &= met
                print(f"  gpio      libgpiod {g['libgpiod']}: buzzer 150/150x4 seen in value as {g['pulses_ms']} ms on, "
                      f"press (pull-down) seen as 'pressed' {g['press_to_event_ms']:.1f} ms later, released "
                      f"{g['released_event'] and round(g['released_event']['duration_ms'])} ms, lines released: "
                      f"{g['lines_released']}  {'MET' if met else 'NOT MET'}")
            elif c == "run":
                met = g["aborted"] and g["beeps_before_press"] >= 2
                ok &= met
                print(f"  run       {g['lib']}: fall -> {g['beeps_before_press']} countdown beeps before the press, "
                      f"aborted {g['press_to_abort_ms']:.0f} ms after the press  {'MET' if met else 'NOT MET'}")
            elif c == "unbind-rebind":
                met = g["fault_reported_s"] is not None and g["recovered_after_bind_s"] is not None
                ok &= met
                print(f"  unbind    {g['lib']}: fault reported {g['fault_reported_s']} s after the unbind, recovered "
                      f"{g['recovered_after_bind_s']} s after the bind  {'MET' if met else 'NOT MET'}")
            elif c == "power":
                met = g["alerts"] == ["device-problem battery-low", "device-problem on-battery", "device-recovered on-battery"]
                ok &= met
                print(f"  power     test_power: battery 15 % -> battery low after {g['battery_low_after_s']} s, mains off -> "
                      f"on battery after {g['on_battery_after_s']} s (bar > 3 s), on -> mains back after "
                      f"{g['mains_back_after_s']} s; each once  {'MET' if met else 'NOT MET'}")
            elif c == "clock":
                met = g["countdown_s"] is not None and abs(g["countdown_s"] - 8) <= 0.2 and g["fall_alerts"] == 1
                ok &= met
                print(f"  clock     date -s +3 days, -1 h: countdown {g['countdown_s']} s of 8, retry after "
                      f"{g['retry_after_s']} s of 5, {g['fall_alerts']} fall alert  {'MET' if met else 'NOT MET'}")
    for f in sorted(glob.glob(os.path.join(out, "diff-*.txt"))):
        last = open(f).read().strip().splitlines()[-1:]
        print(f"  {os.path.basename(f)[5:-4]}: {last[0] if last else '?'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
