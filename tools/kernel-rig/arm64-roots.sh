#!/usr/bin/env bash
# arm64-roots.sh : what the arm64 rig needs besides the kernel (fetch.sh 6.12-arm64 runs it),
# made once into $FG_KERNEL_CACHE with mmdebstrap; each is made again only when its package
# list below changes (a stamp beside it), or with FG_RIG_REBUILD_ROOTS=1.
#
#   arm64-root/           the guest's root (boot-arm64.sh shares it read-only over 9p, a tmpfs
#                         overlay on top): Debian 13 (trixie) arm64, maintainer scripts run
#                         through qemu-user (binfmt_misc), with python3, kmod, i2c-tools, libiio
#                         0.26 and its tools, the libraries fallguard links, busybox-static (the
#                         initramfs's shell). Laid out like the x86 host the rig was written
#                         for: libgpiod 1.6 and its tools (gpiod 1.6.3, from Debian 12) in
#                         /usr, trixie's libgpiod 2.2.1 (libgpiod.so.3) moved to
#                         /var/cache/fallguard/libgpiod2/lib, where guest-tests.py finds 2.x.
#   trixie-amd64-kbuild/  a trixie amd64 chroot the modules are built in: the kernel's own
#                         compiler (gcc-14-aarch64-linux-gnu) and trixie's kbuild tools, which
#                         need glibc 2.38 (Debian 12 has 2.36).
#
# Environment: FG_RIG_DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root
MIRROR=${FG_RIG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
APTOPT='Acquire::Check-Valid-Until "false"'
ROOT_PKGS=bash,python3,kmod,i2c-tools,libiio0,libiio-utils,libmosquitto1,libcurl4t64,libsqlite3-0,busybox-static,procps,libgpiod3,zlib1g
BOOKWORM_PKGS=libgpiod2,gpiod
KBUILD_PKGS=make,gcc-14-aarch64-linux-gnu,libc6-dev,bc,kmod,xz-utils,dwarves

command -v mmdebstrap >/dev/null || die "mmdebstrap missing: run fetch.sh 6.12-arm64 (it installs it)"

# The guest root's maintainer scripts are arm64 programs: run through qemu-user.
binfmt() {
    [[ -e /proc/sys/fs/binfmt_misc/register ]] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    [[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] || update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
    [[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] || die "no binfmt_misc entry for aarch64 (apt-get install qemu-user-static binfmt-support)"
}

make_root() {
    local dest=$FG_KERNEL_CACHE/arm64-root stamp="trixie arm64 $ROOT_PKGS + bookworm $BOOKWORM_PKGS"
    if [[ ${FG_RIG_REBUILD_ROOTS:-0} != 1 && -f $dest.stamp && $(cat "$dest.stamp") == "$stamp" && -x $dest/usr/bin/python3 ]]; then
        log "arm64 guest root up to date in $dest"
        return
    fi
    binfmt
    local t0=$SECONDS
    rm -rf "$dest" "$dest.tmp" "$dest.bookworm" "$dest.stamp"
    log "arm64 guest root: mmdebstrap --arch arm64 trixie ($ROOT_PKGS), a few minutes under qemu-user"
    mmdebstrap --arch=arm64 --variant=essential --aptopt="$APTOPT" --include="$ROOT_PKGS" \
        trixie "$dest.tmp" "$MIRROR" >&2 || die "mmdebstrap of the arm64 guest root failed"
    # libgpiod 1.6 and its tools from Debian 12 (extracted, no scripts), where the x86 host has them
    mmdebstrap --arch=arm64 --variant=extract --aptopt="$APTOPT" --include="$BOOKWORM_PKGS" \
        bookworm "$dest.bookworm" "$MIRROR" >&2 || die "mmdebstrap of bookworm's libgpiod2 failed"
    local lib=$dest.tmp/usr/lib/aarch64-linux-gnu
    mkdir -p "$dest.tmp/var/cache/fallguard/libgpiod2/lib"
    mv "$lib"/libgpiod.so.3* "$dest.tmp/var/cache/fallguard/libgpiod2/lib/"
    cp -a "$dest.bookworm"/usr/lib/aarch64-linux-gnu/libgpiod.so.2* "$lib/"
    cp -a "$dest.bookworm"/usr/bin/gpio* "$dest.tmp/usr/bin/"
    rm -rf "$dest.bookworm"
    # mount points of the guest (the overlay makes the rest)
    mkdir -p "$dest.tmp/fg-ctl"
    mv "$dest.tmp" "$dest"
    echo "$stamp" >"$dest.stamp"
    log "arm64 guest root made in $((SECONDS - t0)) s ($(du -sm "$dest" | cut -f1) MB)"
}

make_kbuild() {
    local dest=$FG_KERNEL_CACHE/trixie-amd64-kbuild stamp="trixie amd64 $KBUILD_PKGS"
    if [[ ${FG_RIG_REBUILD_ROOTS:-0} != 1 && -f $dest.stamp && $(cat "$dest.stamp") == "$stamp" && -d $dest/usr/bin ]]; then
        log "kbuild chroot up to date in $dest"
        return
    fi
    local t0=$SECONDS
    rm -rf "$dest" "$dest.tmp" "$dest.stamp"
    log "kbuild chroot: mmdebstrap trixie amd64 ($KBUILD_PKGS)"
    mmdebstrap --variant=minbase --aptopt="$APTOPT" --include="$KBUILD_PKGS" \
        trixie "$dest.tmp" "$MIRROR" >&2 || die "mmdebstrap of the kbuild chroot failed"
    mv "$dest.tmp" "$dest"
    echo "$stamp" >"$dest.stamp"
    log "kbuild chroot made in $((SECONDS - t0)) s ($(du -sm "$dest" | cut -f1) MB)"
}

mkdir -p "$FG_KERNEL_CACHE"
make_kbuild
make_root
