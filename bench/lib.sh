# Shared by the bench scripts: a release build of fallguard and a temporary folder.
# Release builds link the Swift runtime and Foundation statically, as deploy/ installs them.
# Source it from a script that has done `cd "$(dirname "$0")/.."`.
export PATH="/opt/swift/usr/bin:$PATH"
build_release() {
    if [ -n "${FALLGUARD_BIN:-}" ]; then B=$FALLGUARD_BIN; return; fi   # an already built binary
    tools/build-release fallguard >/dev/null
    B=$PWD/.build/release/fallguard
}
make_tmp() {
    if [ -n "${KEEP:-}" ]; then OUT=$KEEP; mkdir -p "$OUT"; return; fi
    OUT=$(mktemp -d)
    trap 'rm -rf "$OUT"' EXIT
}
need_root() {
    if [ "$(id -u)" != 0 ]; then echo "needs root (the emulators use a private mount namespace)"; exit 77; fi
}
# Recordings from the development datasets: 100 s of walking, and a fall.
WALK=../shared/datasets/sisfall-40hz-dev/SA01/D01_SA01_R01.csv
