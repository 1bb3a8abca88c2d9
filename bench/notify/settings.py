#!/usr/bin/env python3
"""Writes the notification settings the notify benches use: the thesis default (three contacts,
SMS + call to the primary, SMS to the others) on a Twilio-compatible receiver plus a signed
webhook, all on 127.0.0.1:PORT. Usage: settings.py PORT RETRY_MAX_S > settings.json"""
import json, sys

port, retry_max = int(sys.argv[1]), float(sys.argv[2])
base = f"http://127.0.0.1:{port}"
account = {"account-sid": "AC0123456789abcdef0123456789abcdef", "auth-token": "test-token",
           "from": "+15005550006", "base-url": base, "timeout": 5}
print(json.dumps({
    "device": "bench", "wearer": {"name": "Margaret", "location": "Flat 3, 12 Mill Lane"},
    "contacts": [{"name": "Anna", "phone": "+447700900001"}, {"name": "Ben", "phone": "+447700900002"},
                 {"name": "Cara", "phone": "+447700900003"}],
    "channels": {"sms": {"type": "twilio-sms", **account}, "call": {"type": "twilio-call", **account},
                 "hook": {"type": "webhook", "url": base + "/hook", "secret": "s3cret"}},
    "policy": {"fall": {"broadcast": ["hook"]}, "retry": {"initial": 1, "max": retry_max}},
}, indent=1))
