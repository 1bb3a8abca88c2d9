#!/usr/bin/env bash
# Issue 37: a hung bridge (SIGSTOP) shows offline within 20 s with the default keepalive (8 s):
# 12 libmosquitto clients stopped at every phase of their ping cycle, the time to their last will.
# Usage: bench/hung-offline.sh   (KEEPALIVE=10 to compare; about 30 s)
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in mosquitto mosquitto_sub; do
    command -v "$tool" >/dev/null || { echo "$tool missing: tools/setup-debian installs it" >&2; exit 1; }
done
exec python3 bench/hung_offline.py
