#!/usr/bin/env bash
# Issue 30: the site broker's access rules of docs/care-home.md (read from the page itself),
# on a real mosquitto with a login per bridge: a bridge publishes and reads only its own
# topics, the station reads all and may only acknowledge; with the page's
# use_username_as_clientid (issue 40 attack 9), room-002's login asking for room-001's client id
# does not take room-001 off the broker. Prints PASS/FAIL per rule and 'N passed, N failed'.
# Takes about 5 s. WITHOUT_CLIENTID_BINDING=1 leaves that line out (the check must then fail).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=$(mktemp -d)
trap 'kill "$BROKER" 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$DIR"' EXIT
# The ACL block that starts with '# /etc/mosquitto/acl' (the site's), up to its closing fence.
awk '/^# \/etc\/mosquitto\/acl$/ && !done {on=1} on && /^```/ {on=0; done=1} on' docs/care-home.md > "$DIR/acl"
grep -q '^pattern readwrite fallguard/%u/#' "$DIR/acl" || { echo "no ACL found in docs/care-home.md" >&2; exit 1; }
binding=$(grep -E '^use_username_as_clientid true' docs/care-home.md | head -1 | cut -d' ' -f1-2 || true)
[ -n "$binding" ] || { echo "no use_username_as_clientid in docs/care-home.md's broker configuration" >&2; exit 1; }
[ -z "${WITHOUT_CLIENTID_BINDING:-}" ] || binding=""
touch "$DIR/passwd"; chmod 600 "$DIR/passwd"
for u in room-001 room-002 station homeassistant; do mosquitto_passwd -b "$DIR/passwd" "$u" "pw-$u"; done
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'listener %s 127.0.0.1\nallow_anonymous false\npassword_file %s/passwd\nacl_file %s/acl\nuser root\n%s\n' "$PORT" "$DIR" "$DIR" "$binding" > "$DIR/m.conf"
mosquitto -c "$DIR/m.conf" >"$DIR/log" 2>&1 &
BROKER=$!
sleep 0.5
sub() { mosquitto_sub -h 127.0.0.1 -p "$PORT" -u "$1" -P "pw-$1" -i "fallguard-$1" -t 'fallguard/#' -t 'homeassistant/#' -v -W 3 > "$DIR/$1.out" 2>/dev/null & }
pub() { mosquitto_pub -h 127.0.0.1 -p "$PORT" -u "$1" -P "pw-$1" -q 1 -t "$2" -m "$3" "${@:4}" 2>/dev/null || true; }
sub station; sub homeassistant
sleep 0.5
pub room-001 fallguard/room-001/alert own-alert
pub room-001 homeassistant/binary_sensor/fallguard_room-001/fall/config own-config
pub room-001 fallguard/room-002/alert forged-alert
pub room-001 fallguard/room-002/ack forged-ack
pub room-001 homeassistant/binary_sensor/fallguard_room-002/fall/config forged-config
# (Home Assistant's reader is the witness after the station's own publishes, for the same reason.)
# room-001's reader after its own publishes: one connection per login (a second one of the same
# login takes the first over, as test-alert beside the daemon does: docs/care-home.md)
sub room-001
sleep 0.5
pub room-002 fallguard/room-002/state room-2-state
pub room-002 fallguard/room-002/state room-2-as-room-1 -i fallguard-room-001   # room-001's client id
sleep 0.3
pub station fallguard/room-002/ack station-ack-2
pub station fallguard/room-001/ack station-ack-1
pub station fallguard/room-002/alert station-alert
sleep 3
passed=0 failed=0
expect() {   # expect WHO yes|no LINE WHAT
    if grep -qx "$3" "$DIR/$1.out" 2>/dev/null; then got=yes; else got=no; fi
    if [ "$got" = "$2" ]; then passed=$((passed + 1)); echo "PASS: $4"; else failed=$((failed + 1)); echo "FAIL: $4"; fi
}
expect station yes "fallguard/room-001/alert own-alert" "a bridge publishes its own alert; the station reads it"
expect homeassistant yes "homeassistant/binary_sensor/fallguard_room-001/fall/config own-config" "a bridge publishes its own discovery"
expect station no "fallguard/room-002/alert forged-alert" "a bridge cannot publish another bridge's alert"
expect station no "fallguard/room-002/ack forged-ack" "a bridge cannot acknowledge another bridge's alarm"
expect homeassistant no "homeassistant/binary_sensor/fallguard_room-002/fall/config forged-config" "a bridge cannot publish another bridge's discovery"
expect room-001 no "fallguard/room-002/state room-2-state" "a bridge cannot read another bridge's topics"
expect room-001 no "fallguard/room-002/ack station-ack-2" "a bridge cannot read another bridge's acknowledgements"
expect room-001 yes "fallguard/room-001/ack station-ack-1" "the station acknowledges; the bridge reads its own ack (still connected after room-002's login asked for its client id)"
expect homeassistant yes "fallguard/room-002/state room-2-as-room-1" "room-002's login under room-001's client id is room-002 on the broker (its own topics only)"
expect homeassistant no "fallguard/room-002/alert station-alert" "the station cannot publish an alert"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
