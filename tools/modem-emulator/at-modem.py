#!/usr/bin/env python3
'''An AT modem on a serial line, for a real ModemManager to probe and drive (issue 36).

It speaks the 3GPP TS 27.007 / 27.005 dialogue as ModemManager's generic plugin uses it:
identification (ATI, +GCAP with +CGSM, +CGMI/+CGMM/+CGMR/+CGSN, +CIMI), the SIM (+CPIN?:
READY, SIM PIN, or +CME ERROR 10 "SIM not inserted"), registration (+CREG?/+CGREG?/+CEREG?,
+COPS?), signal (+CSQ), SMS in PDU mode (+CMGF=0: SMS-SUBMIT decoded from +CMGS/+CMGW, an
SMS-DELIVER encoded for +CMGR/+CMGL and announced by an unsolicited +CMTI; +CPMS, +CNMI,
+CMSS, +CMGD) and voice calls (ATD<number>; then +CLCC: dialing, alerting, then active
(answered), or BUSY / NO ANSWER).

The serial line is the host end of a QEMU serial port: a unix socket that QEMU listens on
(`-chardev socket,id=mdm,path=SOCK,server=on,wait=off -device isa-serial,chardev=mdm`); the
emulator connects to it (and again after `plug`).

Control: a unix socket (--control) taking one command a line, answering one JSON line:
    sim ready|missing|pin       the SIM as the next +CPIN? says it
    signal N                    +CSQ's rssi (0-31; 99 unknown); 0 or 99 also deregisters
    register home|roaming|searching|denied|none
    call-outcome answered|no-answer|busy   what the next calls do
    receive NUMBER TEXT         an SMS arrives (stored in the SIM, +CMTI sent)
    unplug | plug               close the serial line and answer nothing / connect again
    sent                        {"sms": [...], "calls": [...]}: every SMS part and call
    stats                       the commands seen and how many of each answered ERROR
Every SMS the modem sends and every call is also appended to --log (JSON lines, with its
unix time), and every AT command and answer to --trace when given.

Usage: at-modem.py --socket modem.sock --control control.sock --log sent.jsonl [--trace at.log]
'''

import argparse
import json
import os
import re
import socket
import sys
import threading
import time

# ---- GSM 03.38 -------------------------------------------------------------------------
GSM7 = ('@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?'
        '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà')
GSM7_EXT = {0x0a: '\f', 0x14: '^', 0x28: '{', 0x29: '}', 0x2f: '\\', 0x3c: '[', 0x3d: '~',
            0x3e: ']', 0x40: '|', 0x65: '€'}


def unpack_septets(data, count, skip_bits=0):
    bits = int.from_bytes(data, 'little')
    return [(bits >> (skip_bits + 7 * i)) & 0x7f for i in range(count)]


def pack_septets(septets):
    bits = 0
    for i, s in enumerate(septets):
        bits |= s << (7 * i)
    return bits.to_bytes((len(septets) * 7 + 7) // 8, 'little')


def gsm7_decode(septets):
    out, escape = [], False
    for s in septets:
        if escape:
            out.append(GSM7_EXT.get(s, '?'))
            escape = False
        elif s == 0x1b:
            escape = True
        else:
            out.append(GSM7[s])
    return ''.join(out)


def gsm7_encode(text):
    ext = {v: k for k, v in GSM7_EXT.items()}
    out = []
    for ch in text:
        if ch in ext:
            out += [0x1b, ext[ch]]
        elif ch in GSM7:
            out.append(GSM7.index(ch))
        else:
            return None
    return out


def decode_number(data, digits, toa):
    if toa & 0x70 == 0x50:   # alphanumeric
        return gsm7_decode(unpack_septets(data, digits * 4 // 7))
    text = ''.join(f'{b & 0xf:x}{b >> 4:x}' for b in data)[:digits].replace('f', '')
    return ('+' if toa & 0x70 == 0x10 else '') + text


def encode_number(number):
    international = number.startswith('+')
    digits = number.lstrip('+')
    padded = digits + ('f' if len(digits) % 2 else '')
    bcd = bytes(int(padded[i + 1] + padded[i], 16) for i in range(0, len(padded), 2))
    return len(digits), (0x91 if international else 0x81), bcd


def decode_submit(pdu_hex):
    '''An SMS-SUBMIT (with its SMSC prefix) -> dict(number, text, ref, part, parts).'''
    b = bytes.fromhex(pdu_hex)
    i = 1 + b[0]                       # the SMSC address
    first = b[i]; i += 1
    if first & 0x03 != 0x01:
        raise ValueError(f'not an SMS-SUBMIT (first octet {first:#04x})')
    i += 1                             # message reference
    da_len, da_toa = b[i], b[i + 1]
    number = decode_number(b[i + 2:i + 2 + (da_len + 1) // 2], da_len, da_toa)
    i += 2 + (da_len + 1) // 2
    i += 1                             # PID
    dcs = b[i]; i += 1
    vpf = (first >> 3) & 0x03
    i += {0: 0, 2: 1, 1: 7, 3: 7}[vpf]
    udl = b[i]; i += 1
    ud = b[i:]
    ref, part, parts, header_octets = None, 1, 1, 0
    if first & 0x40:                   # UDHI
        udhl = ud[0]
        header = ud[1:1 + udhl]
        j = 0
        while j < len(header):
            iei, iel = header[j], header[j + 1]
            value = header[j + 2:j + 2 + iel]
            if iei == 0x00:
                ref, parts, part = value[0], value[1], value[2]
            elif iei == 0x08:
                ref, parts, part = (value[0] << 8) | value[1], value[2], value[3]
            j += 2 + iel
        header_octets = 1 + udhl
    alphabet = (dcs >> 2) & 0x03 if dcs & 0xc0 == 0 else 0
    if alphabet == 2:                  # UCS-2
        text = ud[header_octets:].decode('utf-16-be', errors='replace')
    elif alphabet == 1:
        text = ud[header_octets:udl].decode('latin-1')
    else:
        skip = (header_octets * 8 + 6) // 7   # septets the header (and its fill bits) take
        septets = unpack_septets(ud, udl)[skip:]
        text = gsm7_decode(septets)
    return {'number': number, 'text': text, 'ref': ref, 'part': part, 'parts': parts, 'dcs': dcs}


def encode_deliver(number, text, when):
    '''An SMS-DELIVER with an SMSC prefix, as a hex string, and its length without the SMSC.'''
    smsc_digits, smsc_toa, smsc_bcd = encode_number('+447785016005')
    smsc = bytes([1 + len(smsc_bcd), smsc_toa]) + smsc_bcd
    n_digits, toa, bcd = encode_number(number)
    septets = gsm7_encode(text)
    if septets is not None and len(septets) <= 160:
        dcs, udl, ud = 0x00, len(septets), pack_septets(septets)
    else:
        ud = text.encode('utf-16-be')[:140]
        dcs, udl = 0x08, len(ud)
    t = time.gmtime(when)

    def swapped(v):
        return ((v % 10) << 4) | (v // 10)
    scts = bytes(swapped(v) for v in (t.tm_year % 100, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)) + b'\x00'
    tpdu = bytes([0x04, n_digits, toa]) + bcd + bytes([0x00, dcs]) + scts + bytes([udl]) + ud
    return (smsc + tpdu).hex().upper(), len(tpdu)


# ---- the modem ---------------------------------------------------------------------------
CALL_STAT = {'active': 0, 'dialing': 2, 'alerting': 3}


class Modem:
    def __init__(self, args):
        self.args = args
        self.lock = threading.RLock()
        self.sim = args.sim
        self.rssi = args.rssi
        self.registration = args.registration
        self.call_outcome = args.call_outcome
        self.echo = False
        self.cmee = 1
        self.cmgf = 0
        self.creg_n = {'CREG': 0, 'CGREG': 0, 'CEREG': 0}
        self.storage = {}              # index -> (stat, pdu hex, length)
        self.next_mr = 1
        self.calls = {}                # id -> dict(number, stat, started)
        self.next_call = 1
        self.sent = {'sms': [], 'calls': []}
        self.stats = {}
        self.conn = None
        self.plugged = True
        self.pending = None            # ('CMGS'|'CMGW', length) waiting for the PDU
        self.log = open(args.log, 'a', buffering=1) if args.log else None
        self.trace = open(args.trace, 'a', buffering=1) if args.trace else None

    # -- the line ---------------------------------------------------------------------
    def write(self, text):
        conn = self.conn
        if self.trace:
            self.trace.write(f'{time.time():.3f} < {text!r}\n')
        if conn is None:
            return
        try:
            conn.sendall(text.encode('latin-1', errors='replace'))
        except OSError:
            pass

    def urc(self, line):
        self.write(f'\r\n{line}\r\n')

    def serve(self):
        while True:
            if not self.plugged:
                time.sleep(0.2)
                continue
            try:
                conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                conn.connect(self.args.socket)
            except OSError:
                time.sleep(0.2)
                continue
            self.conn = conn
            if self.trace:
                self.trace.write(f'{time.time():.3f} connected\n')
            buffer = b''
            while self.plugged:
                try:
                    data = conn.recv(4096)
                except OSError:
                    data = b''
                if not data:
                    break
                buffer += data
                buffer = self.consume(buffer)
            self.conn = None
            try:
                conn.close()
            except OSError:
                pass
            time.sleep(0.5)

    def consume(self, buffer):
        while True:
            if self.pending:
                end = min([p for p in (buffer.find(b'\x1a'), buffer.find(b'\x1b')) if p >= 0], default=-1)
                if end < 0:
                    return buffer
                body, buffer = buffer[:end].decode('latin-1').strip(), buffer[end + 1:]
                with self.lock:
                    self.finish_pdu(body)
                continue
            end = buffer.find(b'\r')
            if end < 0:
                return buffer
            line, buffer = buffer[:end].decode('latin-1').strip().lstrip('\n'), buffer[end + 1:].lstrip(b'\n')
            if not line:
                continue
            if self.echo:
                self.write(line + '\r')
            if self.trace:
                self.trace.write(f'{time.time():.3f} > {line!r}\n')
            with self.lock:
                self.command(line)

    # -- commands ---------------------------------------------------------------------
    def error(self, code=None):
        if code is not None and self.cmee:
            return f'+CME ERROR: {code}'
        return 'ERROR'

    def command(self, line):
        if line.upper() == 'A/':
            line = 'AT'
        if not line.upper().startswith('AT'):
            self.write('\r\nERROR\r\n')
            return
        body = line[2:]
        if body.upper().startswith('D'):
            parts = [body]
        else:
            parts = [p for p in re.split(r';(?=\+|$)', body)] if body else ['']
        out = []
        for index, part in enumerate(parts):
            if part == '' and index > 0:
                continue
            key = re.match(r'[+&^$]?[A-Za-z]*\??=?\??', part).group(0).upper() if part else ''
            self.stats.setdefault(key, [0, 0])[0] += 1
            answer = self.one(part)
            if answer is None:           # a prompt: the PDU follows
                return
            lines, final = answer
            if final != 'OK':
                self.stats[key][1] += 1
                out += lines
                self.respond(out, final)
                return
            out += lines
        self.respond(out, 'OK')

    def respond(self, lines, final):
        text = ''.join(f'\r\n{line}\r\n' for line in lines)
        self.write(text + f'\r\n{final}\r\n')

    def one(self, part):
        p = part.upper()
        reg_ok = self.registration in ('home', 'roaming')
        if p in ('', 'Z', 'E0V1', 'V1', '&F', 'Q0', 'X4', '&C1', '&D2', 'S0=0'):
            return [], 'OK'
        if p.startswith('E'):
            self.echo = p.endswith('1')
            return [], 'OK'
        if p in ('I', '+GMI', '+CGMI'):
            return (['FallGuard emulated AT modem', 'Model: FG-EMU', 'Revision: 1.0'] if p == 'I'
                    else ['FallGuard']), 'OK'
        if p in ('+GMM', '+CGMM'):
            return ['FG-EMU 27.007'], 'OK'
        if p in ('+GMR', '+CGMR'):
            return ['FG-EMU-1.0'], 'OK'
        if p in ('+GSN', '+CGSN'):
            return ['356938035643809'], 'OK'
        if p == '+GCAP':
            return ['+GCAP: +CGSM,+FCLASS,+DS'], 'OK'
        if p.startswith('+CMEE='):
            self.cmee = int(p[6:] or 0)
            return [], 'OK'
        if p == '+CMEE?':
            return [f'+CMEE: {self.cmee}'], 'OK'
        if p == '+CFUN?':
            return ['+CFUN: 1'], 'OK'
        if p.startswith('+CFUN='):
            return [], 'OK'
        if p == '+CPIN?':
            if self.sim == 'missing':
                return [], self.error(10)
            return ['+CPIN: ' + ('SIM PIN' if self.sim == 'pin' else 'READY')], 'OK'
        if p.startswith('+CPIN='):
            if self.sim == 'pin' and p[6:].strip('"') == '1234':
                self.sim = 'ready'
                return [], 'OK'
            return [], self.error(16)
        if self.sim == 'missing' and p in ('+CIMI', '+CCID', '+ICCID', '+CNUM'):
            return [], self.error(10)
        if self.sim == 'pin' and p in ('+CIMI', '+CNUM'):
            return [], self.error(11)
        if p == '+CIMI':
            return ['234150999999999'], 'OK'
        if p in ('+CCID', '+ICCID'):
            return ['+CCID: 8944110068256270054'], 'OK'
        if p == '+CNUM':
            return ['+CNUM: ,"+447700900000",145'], 'OK'
        if p == '+CSQ':
            return [f'+CSQ: {self.rssi},99'], 'OK'
        if p == '+CSQ=?':
            return ['+CSQ: (0-31,99),(0-7,99)'], 'OK'
        m = re.fullmatch(r'\+(CREG|CGREG|CEREG)(=(\d)|\?|=\?)', p)
        if m:
            kind = m.group(1)
            if m.group(3) is not None:
                self.creg_n[kind] = int(m.group(3))
                return [], 'OK'
            if p.endswith('=?'):
                return [f'+{kind}: (0-2)'], 'OK'
            return [self.registration_line(kind, self.creg_n[kind])], 'OK'
        if p.startswith('+COPS=?'):
            return ['+COPS: (2,"FallGuard Mobile","FG Mobile","23415",7),,(0-4),(0-2)'], 'OK'
        if p.startswith('+COPS='):
            self.cops_format = int((p[6:].split(',') + ['0', '0'])[1] or 0) if ',' in p else 0
            return [], 'OK'
        if p == '+COPS?':
            if not reg_ok:
                return ['+COPS: 0'], 'OK'
            name = '"23415"' if getattr(self, 'cops_format', 0) == 2 else '"FallGuard Mobile"'
            return [f'+COPS: 0,{getattr(self, "cops_format", 0)},{name},7'], 'OK'
        if p == '+CSCS=?':
            return ['+CSCS: ("IRA","GSM","UCS2")'], 'OK'
        if p.startswith('+CSCS'):
            return (['+CSCS: "IRA"'] if p.endswith('?') else []), 'OK'
        if p == '+CMGF=?':
            return ['+CMGF: (0)'], 'OK'
        if p == '+CMGF?':
            return [f'+CMGF: {self.cmgf}'], 'OK'
        if p.startswith('+CMGF='):
            return ([], 'OK') if p[6:] == '0' else ([], '+CMS ERROR: 303')
        if p == '+CPMS=?':
            return ['+CPMS: ("SM","ME"),("SM","ME"),("SM","ME")'], 'OK'
        if p == '+CPMS?':
            n = len(self.storage)
            return [f'+CPMS: "SM",{n},30,"SM",{n},30,"SM",{n},30'], 'OK'
        if p.startswith('+CPMS='):
            if self.sim != 'ready':
                return [], '+CMS ERROR: 310'
            n = len(self.storage)
            return [f'+CPMS: {n},30,{n},30,{n},30'], 'OK'
        if p == '+CNMI=?':
            return ['+CNMI: (0-2),(0-3),(0,2),(0-2),(0,1)'], 'OK'
        if p.startswith('+CNMI') or p.startswith('+CSMS') or p.startswith('+CSDH') or p.startswith('+CSCA'):
            if p == '+CSCA?':
                return ['+CSCA: "+447785016005",145'], 'OK'
            if p == '+CSMS?':
                return ['+CSMS: 0,1,1,1'], 'OK'
            return [], 'OK'
        m = re.fullmatch(r'\+(CMGS|CMGW)=(\d+)(,\d+)?', p)
        if m:
            if self.sim != 'ready':
                return [], '+CMS ERROR: 310'
            if m.group(1) == 'CMGS' and not reg_ok:
                # answered after the PDU, as a modem does
                pass
            self.pending = (m.group(1), int(m.group(2)))
            self.write('\r\n> ')
            return None
        m = re.fullmatch(r'\+CMSS=(\d+)(,.*)?', p)
        if m:
            index = int(m.group(1))
            if index not in self.storage:
                return [], '+CMS ERROR: 321'
            if not reg_ok:
                return [], '+CMS ERROR: 331'
            mr = self.send_pdu(self.storage[index][1])
            self.storage[index] = (3, *self.storage[index][1:])
            return [f'+CMSS: {mr}'], 'OK'
        m = re.fullmatch(r'\+CMGR=(\d+)', p)
        if m:
            index = int(m.group(1))
            if index not in self.storage:
                return [], '+CMS ERROR: 321'
            stat, pdu, length = self.storage[index]
            if stat == 0:
                self.storage[index] = (1, pdu, length)
            return [f'+CMGR: {stat},,{length}', pdu], 'OK'
        m = re.fullmatch(r'\+CMGL=(\d)', p)
        if m:
            wanted = int(m.group(1))
            lines = []
            for index in sorted(self.storage):
                stat, pdu, length = self.storage[index]
                if wanted == 4 or stat == wanted:
                    lines += [f'+CMGL: {index},{stat},,{length}', pdu]
                    if stat == 0:
                        self.storage[index] = (1, pdu, length)
            return lines, 'OK'
        if p == '+CMGL=?':
            return ['+CMGL: (0-4)'], 'OK'
        m = re.fullmatch(r'\+CMGD=(\d+)(,(\d))?', p)
        if m:
            if m.group(3) and m.group(3) != '0':
                self.storage.clear()
            else:
                self.storage.pop(int(m.group(1)), None)
            return [], 'OK'
        if p == '+CMGD=?':
            return ['+CMGD: (1-30),(0-4)'], 'OK'
        # voice
        if p.startswith('D'):
            number = part[1:].rstrip(';').strip()
            if not part.endswith(';'):
                return [], 'NO CARRIER'
            if not reg_ok or self.sim != 'ready':
                return [], 'NO CARRIER'
            call_id = self.next_call
            self.next_call += 1
            call = {'id': call_id, 'number': number, 'stat': 'dialing', 'outcome': self.call_outcome,
                    'time': time.time()}
            self.calls[call_id] = call
            self.record('calls', {'number': number, 'outcome': self.call_outcome, 'time': call['time']})
            threading.Thread(target=self.progress, args=(call,), daemon=True).start()
            return [], 'OK'
        if p == '+CLCC':
            return [f'+CLCC: {c["id"]},0,{CALL_STAT[c["stat"]]},0,0,"{c["number"]}",'
                    f'{145 if c["number"].startswith("+") else 129}' for c in self.calls.values()], 'OK'
        if p == '+CLCC=?':
            return [], 'OK'
        if p.startswith('+CLCC=') or p.startswith('+CLIP') or p.startswith('+CRC') or p.startswith('+CCWA'):
            return [], 'OK'
        if p in ('H', '+CHUP') or p.startswith('+CHLD'):
            self.calls.clear()
            return [], 'OK'
        if p == '+CLVL?':
            return ['+CLVL: 3'], 'OK'
        return [], 'ERROR'

    def registration_line(self, kind, n, unsolicited=False):
        '''+CREG? answers "n,stat[,lac,ci[,act]]"; the unsolicited +CREG has no n.'''
        stat = {'home': 1, 'roaming': 5, 'searching': 2, 'denied': 3, 'none': 0}[self.registration]
        fields = [] if unsolicited else [str(n)]
        fields.append(str(stat))
        if n == 2 and stat in (1, 5):
            fields += ['"1A2B"', '"00C3D4E5"'] + (['7'] if kind == 'CEREG' else [])
        return f'+{kind}: ' + ','.join(fields)

    def announce_registration(self):
        for kind, n in self.creg_n.items():
            if n:
                self.urc(self.registration_line(kind, n, unsolicited=True))

    def finish_pdu(self, body):
        kind, length = self.pending
        self.pending = None
        try:
            decoded = decode_submit(body)
        except (ValueError, IndexError) as e:
            if self.trace:
                self.trace.write(f'{time.time():.3f} bad PDU {body!r}: {e}\n')
            self.respond([], '+CMS ERROR: 304')
            return
        if kind == 'CMGW':
            index = min(set(range(1, 31)) - set(self.storage))
            self.storage[index] = (2, body, length)
            self.respond([f'+CMGW: {index}'], 'OK')
            return
        if self.registration not in ('home', 'roaming'):
            self.respond([], '+CMS ERROR: 331')
            return
        mr = self.send_pdu(body, decoded)
        self.respond([f'+CMGS: {mr}'], 'OK')

    def send_pdu(self, body, decoded=None):
        decoded = decoded or decode_submit(body)
        mr = self.next_mr
        self.next_mr = (self.next_mr + 1) % 256
        self.record('sms', dict(decoded, time=time.time(), mr=mr))
        return mr

    def record(self, kind, entry):
        self.sent[kind].append(entry)
        if self.log:
            self.log.write(json.dumps(dict(entry, kind=kind)) + '\n')

    def progress(self, call):
        time.sleep(1.0)
        with self.lock:
            if call['id'] not in self.calls:
                return
            call['stat'] = 'alerting'
        time.sleep(2.0)
        with self.lock:
            if call['id'] not in self.calls:
                return
            if call['outcome'] == 'answered':
                call['stat'] = 'active'
                return
            if call['outcome'] == 'busy':
                del self.calls[call['id']]
                self.urc('BUSY')
                return
        time.sleep(self.args.ring_seconds)
        with self.lock:
            if call['id'] in self.calls:
                del self.calls[call['id']]
                self.urc('NO ANSWER')

    # -- control ----------------------------------------------------------------------
    def control(self, line):
        words = line.split(None, 2)
        if not words:
            return {'error': 'empty'}
        what = words[0]
        with self.lock:
            if what == 'sim' and len(words) == 2 and words[1] in ('ready', 'missing', 'pin'):
                self.sim = words[1]
            elif what == 'signal' and len(words) == 2:
                self.rssi = int(words[1])
                if self.rssi in (0, 99):
                    self.registration = 'searching'
                    self.announce_registration()
            elif what == 'register' and len(words) == 2:
                self.registration = words[1]
                self.announce_registration()
            elif what == 'call-outcome' and len(words) == 2:
                self.call_outcome = words[1]
            elif what == 'receive' and len(words) == 3:
                pdu, length = encode_deliver(words[1], words[2], time.time())
                index = min(set(range(1, 31)) - set(self.storage))
                self.storage[index] = (0, pdu, length)
                self.urc(f'+CMTI: "SM",{index}')
                return {'index': index}
            elif what == 'unplug':
                self.plugged = False
                if self.conn:
                    try:
                        self.conn.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
            elif what == 'plug':
                self.plugged = True
            elif what == 'time':
                return {'time': time.time()}
            elif what == 'sent':
                return self.sent
            elif what == 'stats':
                return self.stats
            else:
                return {'error': f'unknown command {line!r}'}
        return {'ok': True}

    def serve_control_dir(self, folder):
        '''Commands as files: NAME.cmd (one command) -> NAME.json (the answer), for a guest
        that reaches the host only through a shared folder.'''
        os.makedirs(folder, exist_ok=True)
        while True:
            for name in sorted(os.listdir(folder)):
                if not name.endswith('.cmd'):
                    continue
                path = os.path.join(folder, name)
                try:
                    with open(path) as f:
                        line = f.read().strip()
                    # a file still being written (write it as NAME.tmp, then rename it)
                    if not line and time.time() - os.path.getmtime(path) < 2:
                        continue
                    os.unlink(path)
                except OSError:
                    continue
                answer = dict(self.control(line), host_time=time.time()) if line != 'sent' else self.control(line)
                tmp = path[:-4] + '.tmp'
                with open(tmp, 'w') as f:
                    json.dump(answer, f)
                os.rename(tmp, path[:-4] + '.json')
            time.sleep(0.1)

    def serve_control(self, path):
        if os.path.exists(path):
            os.unlink(path)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(4)
        while True:
            conn, _ = server.accept()
            with conn, conn.makefile('rw') as f:
                for line in f:
                    f.write(json.dumps(self.control(line.strip())) + '\n')
                    f.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--socket', required=True, help="QEMU's serial socket to connect to")
    ap.add_argument('--control', help='unix socket for control commands')
    ap.add_argument('--control-dir', help='a folder taking commands as NAME.cmd files, answering NAME.json')
    ap.add_argument('--log', help='JSON lines: every SMS sent and call made')
    ap.add_argument('--trace', help='every AT command and answer')
    ap.add_argument('--sim', default='ready', choices=['ready', 'missing', 'pin'])
    ap.add_argument('--rssi', type=int, default=20, help="+CSQ's rssi, 0-31 (20: 65 %%)")
    ap.add_argument('--registration', default='home')
    ap.add_argument('--call-outcome', default='answered', choices=['answered', 'no-answer', 'busy'])
    ap.add_argument('--ring-seconds', type=float, default=30.0, help='ringing before NO ANSWER')
    args = ap.parse_args()
    modem = Modem(args)
    if args.control:
        threading.Thread(target=modem.serve_control, args=(args.control,), daemon=True).start()
    if args.control_dir:
        threading.Thread(target=modem.serve_control_dir, args=(args.control_dir,), daemon=True).start()
    try:
        modem.serve()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == '__main__':
    main()
