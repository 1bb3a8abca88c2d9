'''ModemManager mock template for python-dbusmock, with Messaging and Voice.

Debian bookworm's python3-dbusmock (0.28) has no ModemManager template; this one gives what
`mmcli` (the real client, libmm-glib) reads: the manager's ObjectManager with one modem
(/org/freedesktop/ModemManager1/Modem/0: Modem, Modem3gpp, Modem.Messaging, Modem.Voice),
its SIM, SMS and Call objects. Sms.Send marks the SMS sent (or fails it when the modem is not
registered); Call.Start rings and ends as told by SetCallOutcome.

Run on a private system bus:
    dbus-daemon --config-file=tools/modem-mock/system-bus.conf --print-address
    DBUS_SYSTEM_BUS_ADDRESS=… python3 -m dbusmock --system -t tools/modem-mock/modemmanager.py

Control (interface org.freedesktop.DBus.Mock on /org/freedesktop/ModemManager1):
    SetModem(a{ss}): sim ("present", "missing", "pin"), signal (u, percent), registration
                     ("home", "roaming", "searching", "idle", "denied"), send-delay (seconds
                     Sms.Send takes)
    Unplug() / Plug(): the modem object goes away / comes back
    ReceiveSms(ss number, text) -> o: an SMS arrives
    SetCallOutcome(s): what the next calls do: "answered", "no-answer", "busy" (ended, reason
                     unknown, as the generic plugin tells a BUSY), "refused-or-busy"
    Sent() -> a(ssss): every SMS sent and call started: (kind, number, text, unix time as text)
'''

import json
import time

import dbus
from gi.repository import GLib

from dbusmock import MOCK_IFACE, OBJECT_MANAGER_IFACE, mockobject

BUS_NAME = 'org.freedesktop.ModemManager1'
MAIN_OBJ = '/org/freedesktop/ModemManager1'
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True

MM = 'org.freedesktop.ModemManager1'
MODEM = MM + '.Modem'
GPP = MODEM + '.Modem3gpp'
MESSAGING = MODEM + '.Messaging'
VOICE = MODEM + '.Voice'
SIM_IFACE = MM + '.Sim'
SMS_IFACE = MM + '.Sms'
CALL_IFACE = MM + '.Call'
MODEM_PATH = MAIN_OBJ + '/Modem/0'
SIM_PATH = MAIN_OBJ + '/SIM/0'

# MMModemState, MMModemStateFailedReason, MMModemLock, MMModem3gppRegistrationState
STATE = {'failed': -1, 'locked': 2, 'disabled': 3, 'enabled': 6, 'searching': 7, 'registered': 8}
FAILED_NONE, FAILED_SIM_MISSING = 0, 2
LOCK_NONE, LOCK_SIM_PIN, LOCK_SIM_PIN2 = 1, 2, 3
REGISTRATION = {'idle': 0, 'home': 1, 'searching': 2, 'denied': 3, 'roaming': 5}
# MMSmsState, MMSmsPduType, MMCallState, MMCallStateReason, MMCallDirection
SMS_STORED, SMS_RECEIVED, SMS_SENT = 1, 3, 5
PDU_DELIVER, PDU_SUBMIT = 1, 2
CALL_DIALING, CALL_RINGING_OUT, CALL_ACTIVE, CALL_TERMINATED = 1, 2, 4, 7
REASON_UNKNOWN, REASON_OUTGOING, REASON_TERMINATED, REASON_BUSY = 0, 1, 4, 5
DIRECTION_OUTGOING = 2


def load(mock, parameters):
    mock.AddProperties(MM, {'Version': '1.20.4'})
    mock.AddMethods(MM, [('ScanDevices', '', '', ''), ('SetLogging', 's', '', '')])
    # As ModemManager does, the object manager lists the modems only (not their SIM, SMS, calls).
    mock.AddMethod(OBJECT_MANAGER_IFACE, 'GetManagedObjects', '', 'a{oa{sa{sv}}}',
                   f'ret = {{dbus.ObjectPath(k): objects[k].props for k in objects if k.startswith("{MAIN_OBJ}/Modem/")}}')
    mock.mm_state = {'sim': parameters.get('sim', 'present'), 'signal': int(parameters.get('signal', 80)),
                     'registration': parameters.get('registration', 'home'), 'outcome': 'answered',
                     'sms': 0, 'calls': 0, 'sent': [], 'plugged': False,
                     # A modem ModemManager has not been asked to enable (no NetworkManager
                     # connection for it): 'disabled' until Modem.Enable(true).
                     'enabled': parameters.get('enabled', True)}
    Plug(mock)


def _state(mock):
    return mock.mm_state


def _generic(mock):
    s = _state(mock)
    registered = s['registration'] in ('home', 'roaming') and s['signal'] > 0
    if s['sim'] == 'missing':
        state, failed, lock = STATE['failed'], FAILED_SIM_MISSING, LOCK_NONE
    elif s['sim'] == 'pin':
        state, failed, lock = STATE['locked'], FAILED_NONE, LOCK_SIM_PIN
    elif not s['enabled']:
        state, failed, lock = STATE['disabled'], FAILED_NONE, LOCK_NONE
    elif s['sim'] == 'pin2':
        # Quectel modems report PIN2 as the lock still needed while registered: it does not
        # stop SMS or calls.
        state, failed, lock = STATE['registered'] if registered else STATE['searching'], FAILED_NONE, LOCK_SIM_PIN2
    else:
        state, failed, lock = STATE['registered'] if registered else STATE['searching'], FAILED_NONE, LOCK_NONE
    return {
        'State': dbus.Int32(state), 'StateFailedReason': dbus.UInt32(failed), 'UnlockRequired': dbus.UInt32(lock),
        'SignalQuality': dbus.Struct((dbus.UInt32(s['signal']), True), signature='ub'),
        'Sim': dbus.ObjectPath(SIM_PATH if s['sim'] != 'missing' else '/'),
    }


def _registration(mock):
    s = _state(mock)
    reg = s['registration'] if s['sim'] in ('present', 'pin2') and s['enabled'] else 'idle'
    if s['signal'] == 0 and reg in ('home', 'roaming'):
        reg = 'searching'
    return {'RegistrationState': dbus.UInt32(REGISTRATION[reg]),
            'OperatorName': 'Mock Mobile' if reg in ('home', 'roaming') else '',
            'OperatorCode': '00101' if reg in ('home', 'roaming') else ''}


def _registered(mock):
    return _registration(mock)['RegistrationState'] in (REGISTRATION['home'], REGISTRATION['roaming'])


@dbus.service.method(MOCK_IFACE, in_signature='', out_signature='')
def Plug(self):
    s = _state(self)
    if s['plugged']:
        return
    s['plugged'] = True
    generic = {
        'Manufacturer': 'FallGuard', 'Model': 'Mock AT modem', 'Revision': '1', 'HardwareRevision': '1',
        'CarrierConfiguration': '', 'CarrierConfigurationRevision': '', 'DeviceIdentifier': 'mock0',
        'Device': '/sys/devices/mock0', 'Physdev': '/sys/devices/mock0', 'Drivers': dbus.Array(['option'], signature='s'),
        'Plugin': 'generic', 'PrimaryPort': 'ttyMOCK0',
        'Ports': dbus.Array([dbus.Struct(('ttyMOCK0', dbus.UInt32(3)), signature='su')], signature='(su)'),
        'EquipmentIdentifier': '490154203237518', 'UnlockRetries': dbus.Dictionary({}, signature='uu'),
        'AccessTechnologies': dbus.UInt32(0x4000), 'OwnNumbers': dbus.Array(['+447700900999'], signature='s'),
        'PowerState': dbus.UInt32(3), 'SupportedCapabilities': dbus.Array([dbus.UInt32(8)], signature='u'),
        'CurrentCapabilities': dbus.UInt32(8), 'MaxBearers': dbus.UInt32(1), 'MaxActiveBearers': dbus.UInt32(1),
        'Bearers': dbus.Array([], signature='o'), 'SimSlots': dbus.Array([], signature='o'), 'PrimarySimSlot': dbus.UInt32(0),
        'SupportedModes': dbus.Array([], signature='(uu)'),
        'CurrentModes': dbus.Struct((dbus.UInt32(0), dbus.UInt32(0)), signature='uu'),
        'SupportedBands': dbus.Array([], signature='u'), 'CurrentBands': dbus.Array([], signature='u'),
        'SupportedIpFamilies': dbus.UInt32(3),
    }
    generic.update(_generic(self))
    self.AddObject(MODEM_PATH, MODEM, generic, [
        ('Enable', 'b', '', f'objects["{MAIN_OBJ}"].EnableModem(args[0])'), ('ListBearers', '', 'ao', 'ret = []'), ('GetCellInfo', '', 'aa{sv}', 'ret = []'),
    ])
    modem = mockobject.objects[MODEM_PATH]
    gpp = {'Imei': '490154203237518', 'EnabledFacilityLocks': dbus.UInt32(0), 'SubscriptionState': dbus.UInt32(0),
           'EpsUeModeOperation': dbus.UInt32(0), 'Pco': dbus.Array([], signature='(ubay)'),
           'InitialEpsBearer': dbus.ObjectPath('/'), 'InitialEpsBearerSettings': dbus.Dictionary({}, signature='sv'),
           'PacketServiceState': dbus.UInt32(0)}
    gpp.update(_registration(self))
    modem.AddProperties(GPP, gpp)
    modem.AddProperties(MESSAGING, {'Messages': dbus.Array([], signature='o'),
                                    'SupportedStorages': dbus.Array([dbus.UInt32(2)], signature='u'),
                                    'DefaultStorage': dbus.UInt32(2)})
    modem.AddMethods(MESSAGING, [
        ('List', '', 'ao', f'ret = self.Get("{MESSAGING}", "Messages")'),
        ('Create', 'a{sv}', 'o', f'ret = objects["{MAIN_OBJ}"].CreateSms(args[0])'),
        ('Delete', 'o', '', f'objects["{MAIN_OBJ}"].DeleteSms(args[0])'),
    ])
    modem.AddProperties(VOICE, {'Calls': dbus.Array([], signature='o'), 'EmergencyOnly': False})
    modem.AddMethods(VOICE, [
        ('ListCalls', '', 'ao', f'ret = self.Get("{VOICE}", "Calls")'),
        ('CreateCall', 'a{sv}', 'o', f'ret = objects["{MAIN_OBJ}"].CreateCall(args[0])'),
        ('DeleteCall', 'o', '', ''), ('HangupAll', '', '', ''),
    ])
    if self.mm_state['sim'] != 'missing':
        self.AddObject(SIM_PATH, SIM_IFACE, {'Active': True, 'SimIdentifier': '89440000000000000001', 'Imsi': '001010000000001',
                                             'Eid': '', 'OperatorIdentifier': '00101', 'OperatorName': 'Mock Mobile',
                                             'EmergencyNumbers': dbus.Array([], signature='s'),
                                             'SimType': dbus.UInt32(1), 'EsimStatus': dbus.UInt32(0),
                                             'Removability': dbus.UInt32(1)}, [])


@dbus.service.method(MOCK_IFACE, in_signature='', out_signature='')
def Unplug(self):
    s = _state(self)
    if not s['plugged']:
        return
    s['plugged'] = False
    for path in [p for p in mockobject.objects if p.startswith(MAIN_OBJ + '/')]:
        self.RemoveObject(path)


@dbus.service.method(MOCK_IFACE, in_signature='a{ss}', out_signature='')
def SetModem(self, values):
    s = _state(self)
    for key in ('sim', 'registration'):
        if key in values:
            s[key] = str(values[key])
    if 'signal' in values:
        s['signal'] = int(values['signal'])
    if 'send-delay' in values:
        s['send-delay'] = float(values['send-delay'])
    if 'enable-delay' in values:
        s['enable-delay'] = float(values['enable-delay'])
    if s['plugged']:
        # Set in place: dbusmock 0.28's UpdateProperties cannot wrap the SignalQuality struct, and
        # mmcli reads the properties afresh each run (GetManagedObjects).
        modem = mockobject.objects[MODEM_PATH]
        modem.props[MODEM].update(_generic(self))
        modem.props[GPP].update(_registration(self))


@dbus.service.method(MOCK_IFACE, in_signature='b', out_signature='')
def EnableModem(self, enable):
    s = _state(self)
    # a slow enable (the kernel rig's emulated guest took 27 s): the caller may stop waiting first
    time.sleep(s.get('enable-delay', 0))
    s['enabled'] = bool(enable)
    s['enables'] = s.get('enables', 0) + 1
    if s['plugged']:
        modem = mockobject.objects[MODEM_PATH]
        modem.props[MODEM].update(_generic(self))
        modem.props[GPP].update(_registration(self))


@dbus.service.method(MOCK_IFACE, in_signature='s', out_signature='')
def SetCallOutcome(self, outcome):
    _state(self)['outcome'] = str(outcome)


@dbus.service.method(MOCK_IFACE, in_signature='', out_signature='s')
def SentJson(self):
    # Sent() as one JSON text (a list of [kind, number, text, unix time]): dbus-send prints a
    # string between quotes without escaping it, and JSON has no raw newline or unescaped quote.
    return json.dumps([[k, n, t, at] for k, n, t, at in _state(self)['sent']])


@dbus.service.method(MOCK_IFACE, in_signature='', out_signature='a(ssss)')
def Sent(self):
    # The time as text: dbus-send prints a double with six digits only.
    return dbus.Array([(k, n, t, f'{at:.3f}') for k, n, t, at in _state(self)['sent']], signature='(ssss)')


def _add_sms(mock, number, text, state, pdu, timestamp=''):
    s = _state(mock)
    path = f'{MAIN_OBJ}/SMS/{s["sms"]}'
    s['sms'] += 1
    mock.AddObject(path, SMS_IFACE, {
        'State': dbus.UInt32(state), 'PduType': dbus.UInt32(pdu), 'Number': number, 'Text': text,
        'Data': dbus.Array([], signature='y'), 'SMSC': '', 'Validity': dbus.Struct((dbus.UInt32(0), dbus.UInt32(0, variant_level=1)), signature='uv'),
        'Class': dbus.Int32(-1), 'TeleserviceId': dbus.UInt32(0), 'ServiceCategory': dbus.UInt32(0),
        'DeliveryReportRequest': False, 'MessageReference': dbus.UInt32(0), 'Timestamp': timestamp,
        'DischargeTimestamp': '', 'DeliveryState': dbus.UInt32(0x100), 'Storage': dbus.UInt32(2),
    }, [
        ('Send', '', '', f'objects["{MAIN_OBJ}"].SendSms(self.__dbus_object_path__)'),
        ('Store', 'u', '', ''),
    ])
    modem = mockobject.objects[MODEM_PATH]
    messages = list(modem.Get(MESSAGING, 'Messages')) + [dbus.ObjectPath(path)]
    modem.UpdateProperties(MESSAGING, {'Messages': dbus.Array(messages, signature='o')})
    modem.EmitSignal(MESSAGING, 'Added', 'ob', [dbus.ObjectPath(path), pdu == PDU_DELIVER])
    return path


@dbus.service.method(MOCK_IFACE, in_signature='a{sv}', out_signature='o')
def CreateSms(self, properties):
    if not _state(self)['plugged']:
        raise dbus.exceptions.DBusException('no modem', name='org.freedesktop.ModemManager1.Error.Core.WrongState')
    if 'number' not in properties or 'text' not in properties:
        raise dbus.exceptions.DBusException('number and text are required',
                                            name='org.freedesktop.ModemManager1.Error.Core.InvalidArgs')
    return _add_sms(self, str(properties['number']), str(properties['text']), SMS_STORED, PDU_SUBMIT)


@dbus.service.method(MOCK_IFACE, in_signature='o', out_signature='')
def SendSms(self, path):
    if not _registered(self) or _generic(self)['State'] != STATE['registered']:
        raise dbus.exceptions.DBusException('not registered', name='org.freedesktop.ModemManager1.Error.MobileEquipment.NoNetwork')
    sms = mockobject.objects[path]
    # a slow send (a serial line, SMS queued on the AT port): the caller may stop waiting first
    time.sleep(_state(self).get('send-delay', 0))
    sms.UpdateProperties(SMS_IFACE, {'State': dbus.UInt32(SMS_SENT)})
    _state(self)['sent'].append(('sms', str(sms.Get(SMS_IFACE, 'Number')), str(sms.Get(SMS_IFACE, 'Text')), time.time()))


@dbus.service.method(MOCK_IFACE, in_signature='o', out_signature='')
def DeleteSms(self, path):
    modem = mockobject.objects[MODEM_PATH]
    messages = [m for m in modem.Get(MESSAGING, 'Messages') if m != path]
    modem.UpdateProperties(MESSAGING, {'Messages': dbus.Array(messages, signature='o')})
    self.RemoveObject(path)


@dbus.service.method(MOCK_IFACE, in_signature='ss', out_signature='o')
def ReceiveSms(self, number, text):
    stamp = time.strftime('%Y-%m-%dT%H:%M:%S+00', time.gmtime())
    return _add_sms(self, number, text, SMS_RECEIVED, PDU_DELIVER, stamp)


@dbus.service.method(MOCK_IFACE, in_signature='ssd', out_signature='o')
def ReceiveSmsAt(self, number, text, unix_time):
    # The network's time stamp `unix_time`: a bridge clock behind the network's.
    stamp = time.strftime('%Y-%m-%dT%H:%M:%S+00', time.gmtime(unix_time))
    return _add_sms(self, number, text, SMS_RECEIVED, PDU_DELIVER, stamp)


@dbus.service.method(MOCK_IFACE, in_signature='a{sv}', out_signature='o')
def CreateCall(self, properties):
    s = _state(self)
    if not s['plugged']:
        raise dbus.exceptions.DBusException('no modem', name='org.freedesktop.ModemManager1.Error.Core.WrongState')
    path = f'{MAIN_OBJ}/Call/{s["calls"]}'
    s['calls'] += 1
    s.setdefault('created', {})[path] = time.monotonic()
    self.AddObject(path, CALL_IFACE, {
        'State': dbus.Int32(0), 'StateReason': dbus.Int32(0), 'Direction': dbus.Int32(DIRECTION_OUTGOING),
        'Number': str(properties['number']), 'Multiparty': False, 'AudioPort': '',
        'AudioFormat': dbus.Dictionary({}, signature='sv'),
    }, [
        ('Start', '', '', f'objects["{MAIN_OBJ}"].StartCall(self.__dbus_object_path__)'),
        ('Hangup', '', '', f'objects["{MAIN_OBJ}"].EndCall(self.__dbus_object_path__, {REASON_TERMINATED})'),
        ('Accept', '', '', ''), ('SendDtmf', 's', '', ''),
    ])
    modem = mockobject.objects[MODEM_PATH]
    calls = list(modem.Get(VOICE, 'Calls')) + [dbus.ObjectPath(path)]
    modem.UpdateProperties(VOICE, {'Calls': dbus.Array(calls, signature='o')})
    return path


def _call_state(path, state, reason):
    call = mockobject.objects.get(path)
    if call is None:
        return
    old = call.Get(CALL_IFACE, 'State')
    call.UpdateProperties(CALL_IFACE, {'State': dbus.Int32(state), 'StateReason': dbus.Int32(reason)})
    call.EmitSignal(CALL_IFACE, 'StateChanged', 'iiu', [old, dbus.Int32(state), dbus.UInt32(reason)])


@dbus.service.method(MOCK_IFACE, in_signature='o', out_signature='')
def StartCall(self, path):
    if not _registered(self) or _generic(self)['State'] != STATE['registered']:
        raise dbus.exceptions.DBusException('not registered', name='org.freedesktop.ModemManager1.Error.MobileEquipment.NoNetwork')
    call = mockobject.objects[path]
    _state(self)['sent'].append(('call', str(call.Get(CALL_IFACE, 'Number')), '', time.time()))
    # As the real ModemManager 1.20's generic plugin does with an AT modem (bench/modem-real.sh):
    # dialing after ATD, ringing-out once +CLCC says alerting, active once it says active,
    # each with the reason unknown; a BUSY or NO ANSWER from the modem ends the call as
    # terminated with the reason unknown too ('refused-or-busy' only where a plugin reads it).
    _call_state(path, CALL_DIALING, REASON_OUTGOING)
    # ModemManager 1.20 polls the call list (+CLCC) only if a call is being established 2 s
    # after one was created (mm-iface-modem-voice.c, CALL_LIST_POLLING_TIMEOUT_SECS): a call
    # started later stays 'dialing' whatever the callee does.
    if time.monotonic() - _state(self).get('created', {}).get(path, 0) > 2:
        return
    GLib.timeout_add(300, lambda: _call_state(path, CALL_RINGING_OUT, REASON_UNKNOWN) and False)
    outcome = _state(self)['outcome']
    if outcome == 'answered':
        GLib.timeout_add(1000, lambda: _call_state(path, CALL_ACTIVE, REASON_UNKNOWN) and False)
    elif outcome == 'busy':
        GLib.timeout_add(1000, lambda: _call_state(path, CALL_TERMINATED, REASON_UNKNOWN) and False)
    elif outcome == 'refused-or-busy':
        GLib.timeout_add(1000, lambda: _call_state(path, CALL_TERMINATED, REASON_BUSY) and False)
    # no-answer: rings until hung up


@dbus.service.method(MOCK_IFACE, in_signature='oi', out_signature='')
def EndCall(self, path, reason):
    _call_state(path, CALL_TERMINATED, reason)
