# shellcheck shell=bash
# Shared helpers for the kernel rig scripts. Sourced, not run.
#
# Layout of the cache (never inside the repository):
#   $FG_KERNEL_CACHE/<krel>/debs/     the .deb files as apt-get download left them
#   $FG_KERNEL_CACHE/<krel>/root/     image + headers + kbuild extracted with dpkg-deb -x
#   $FG_KERNEL_CACHE/<krel>/src/      the few files taken from linux-source
#   $FG_KERNEL_CACHE/<krel>/build/    out-of-tree module builds (build-modules.sh)
#   $FG_KERNEL_CACHE/<krel>/kernel.env  KREL, SERIES, PKGVER, KIMG, MODDIR, KDIR
#   $FG_KERNEL_CACHE/<series> -> <krel>  (symlink, e.g. 6.12 -> 6.12.117+deb12-amd64)

FG_KERNEL_CACHE=${FG_KERNEL_CACHE:-/var/cache/fallguard/kernels}
# virtme-ng installed by fetch.sh when no vng is on PATH (outside /var/cache, which the
# guest's init hides behind a tmpfs)
FG_VIRTME_VENV=${FG_VIRTME_VENV:-/opt/fallguard-virtme-ng}
if [[ -x $FG_VIRTME_VENV/bin/vng ]]; then PATH=$FG_VIRTME_VENV/bin:$PATH; fi
# shellcheck disable=SC2034  # used by the scripts that source this file
RIG_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() { echo "kernel-rig: error: $*" >&2; exit 1; }
log() { echo "kernel-rig: $*" >&2; }

need_root() {
    [[ $(id -u) -eq 0 ]] || die "run as root (apt-get, dpkg-deb -x into $FG_KERNEL_CACHE, insmod in the guest)"
}

# resolve_kdir VERSION -> prints the cache directory of an already fetched kernel.
# VERSION is a series (6.1, 6.12) or a kernel release (6.12.117+deb12-amd64).
resolve_kdir() {
    local v=${1:-}
    [[ -n $v ]] || die "no kernel version given (6.1, 6.12 or a release such as 6.12.117+deb12-amd64)"
    local d="$FG_KERNEL_CACHE/$v"
    [[ -e $d/kernel.env ]] || die "kernel '$v' is not in $FG_KERNEL_CACHE: run tools/kernel-rig/fetch.sh $v first"
    (cd "$d" && pwd -P)
}

# load_env VERSION -> sets KDIR KREL SERIES PKGVER KIMG MODDIR KSRC(headers) from kernel.env
load_env() {
    KDIR=$(resolve_kdir "$1")
    # shellcheck disable=SC1091
    source "$KDIR/kernel.env"
}
