#!/usr/bin/env python3
"""A real SMTP server for FallGuard's e-mail tests (Debian's python3-aiosmtpd).

Listens on 127.0.0.1:PORT; writes every accepted message to FOLDER as N.json: the envelope,
whether TLS and AUTH were used, every header decoded by Python's e-mail parser, the decoded
body and the parser's defects. Recipients starting with `reject` get 550, `busy` get 450.
Prints `ready` when it accepts connections.
"""
import argparse, asyncio, email, email.policy, email.utils, json, os, ssl, sys, threading
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--folder", required=True)
parser.add_argument("--cert"); parser.add_argument("--key")
parser.add_argument("--implicit-tls", action="store_true")
parser.add_argument("--user"); parser.add_argument("--password")
args = parser.parse_args()

class Handler:
    count = 0
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.startswith("reject"):
            return "550 5.1.1 mailbox unavailable"
        if address.startswith("busy"):
            return "450 4.2.1 mailbox busy, try later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        Handler.count += 1
        msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
        record = {
            "mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos,
            "tls": session.ssl is not None or args.implicit_tls,
            "login": getattr(session, "fallguard_login", None),
            "headers": {k: str(v) for k, v in msg.items()},
            "date_parsed": email.utils.parsedate_to_datetime(msg["Date"]).isoformat() if msg["Date"] else None,
            "content_type": msg.get_content_type(), "charset": msg.get_content_charset(),
            "body": msg.get_content(),
            "defects": [type(d).__name__ for d in msg.defects],
            "raw": envelope.original_content.decode("utf-8", "replace"),
        }
        path = os.path.join(args.folder, f"{Handler.count}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(record, f)
        os.rename(path + ".tmp", path)
        return "250 OK queued"

def authenticator(server, session, envelope, mechanism, auth_data):
    ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == args.user \
        and auth_data.password.decode() == args.password
    if ok:
        session.fallguard_login = args.user
    return AuthResult(success=ok, handled=False)

kwargs = {}
context = None
if args.cert:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.cert, args.key)
if args.implicit_tls:
    kwargs["ssl_context"] = context
elif context:
    kwargs["tls_context"] = context
    kwargs["require_starttls"] = True
if args.user:
    kwargs["authenticator"] = authenticator
    kwargs["auth_required"] = True
    kwargs["auth_require_tls"] = context is not None

controller = Controller(Handler(), hostname="127.0.0.1", port=args.port, **kwargs)
controller.start()
print("ready", flush=True)
threading.Event().wait()
