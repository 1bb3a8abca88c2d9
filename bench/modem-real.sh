#!/usr/bin/env bash
# Bar (issue 36, "Modem, real software"): the real ModemManager (Debian's modemmanager 1.20.4)
# driving an emulated AT modem. The kernel rig's guest (tools/kernel-rig, Debian's 6.12 kernel
# under QEMU/TCG) gets a second serial port, a real 8250 ttyS1 whose host end is a unix socket
# to tools/modem-emulator/at-modem.py (27.007/27.005: SMS in PDU mode, calls); in the guest
# tools/kernel-rig/modem-guest.sh tags the port for ModemManager (udev), starts D-Bus, polkitd
# and ModemManager, and tools/kernel-rig/modem-real-checks.sh runs `fallguard run` (this
# worktree's debug build, or FALLGUARD_BIN) with the checks of bench/modem.sh:
#  (a) the Twilio-compatible receiver stopped: the fall's SMS in the emulator's sent log within
#      60 s of the countdown's end, each contact once, a call, the primary's "OK" acknowledges;
#  (b) both up: the modem silent;
#  (c) SIM missing / no signal / unplugged: the problem in status.json, the device-problem by
#      the receiver, the fall's SMS to every contact by the receiver (nothing lost).
# Root. Skips (exit 0, "modem-real: skipped: <why>") without QEMU, virtme-ng or the cached
# kernel (tools/kernel-rig/fetch.sh 6.12). Takes 10-20 min on 2 shared cores.
# Logs (ModemManager's debug log, the AT dialogue, what the modem sent) stay in the folder
# it prints when KEEP=1 or a check failed.
# Usage: bench/modem-real.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
skip() { echo "modem-real: skipped: $*"; exit 0; }
[[ $(id -u) == 0 ]] || skip "needs root (the kernel rig)"
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
command -v mmcli >/dev/null && [[ -x /usr/sbin/ModemManager ]] || skip "ModemManager is not installed (tools/setup-debian)"
# shellcheck source=../tools/kernel-rig/lib.sh
source tools/kernel-rig/lib.sh
command -v vng >/dev/null || skip "no virtme-ng (tools/kernel-rig/fetch.sh)"
[[ -e $FG_KERNEL_CACHE/6.12/kernel.env ]] || skip "kernel 6.12 not cached in $FG_KERNEL_CACHE (tools/kernel-rig/fetch.sh 6.12)"
export PATH="/opt/swift/usr/bin:$PATH"
if [[ -z ${FALLGUARD_BIN:-} ]]; then swift build --product fallguard >/dev/null; FALLGUARD_BIN=$ROOT/.build/debug/fallguard; fi
export FALLGUARD_BIN

OUT=$(mktemp -d /var/tmp/fallguard-modem-real.XXXXXX)
EMU=
cleanup() {
    [[ -n $EMU ]] && { kill -9 "$EMU" 2>/dev/null; wait "$EMU" 2>/dev/null || true; }
    if [[ ${KEEP:-0} == 1 || ${status:-1} != 0 ]]; then echo "logs: $OUT"; else rm -rf "$OUT"; fi
}
trap cleanup EXIT
python3 tools/modem-emulator/at-modem.py --socket "$OUT/modem.sock" --control-dir "$OUT/ctl" \
    --log "$OUT/sent.jsonl" --trace "$OUT/at.log" --ring-seconds 20 > "$OUT/emulator.log" 2>&1 &
EMU=$!
t0=$(date +%s)
set +e
FG_RIG_OUT=$OUT FG_RIG_SENSORS=none FG_RIG_GPIO_LINES=0 FG_RIG_TIMEOUT=${FG_RIG_TIMEOUT:-1800} FG_RIG_QUIET=1 \
FG_RIG_VNG_OPTS="-o=-chardev -o=socket,id=mdm,path=$OUT/modem.sock,server=on,wait=off -o=-device -o=isa-serial,chardev=mdm" \
    tools/kernel-rig/run-guest.sh 6.12 -- tools/kernel-rig/modem-guest.sh -- tools/kernel-rig/modem-real-checks.sh
status=$?
set -e
echo "modem-real: $(( $(date +%s) - t0 )) s wall; ModemManager listed the modem $(cat "$OUT/modem-found-after" 2>/dev/null || echo '?') s after its start"
echo "AT commands ModemManager sent: $(grep -c ' > ' "$OUT/at.log" || true); SMS parts the modem sent: $(grep -c '"kind": "sms"' "$OUT/sent.jsonl" || true); calls: $(grep -c '"kind": "calls"' "$OUT/sent.jsonl" || true)"
[[ $status == 90 ]] && { status=0; skip "the guest did not boot (QEMU or virtme-ng failing here)"; }
exit "$status"
