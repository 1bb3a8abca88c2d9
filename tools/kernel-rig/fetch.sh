#!/usr/bin/env bash
# fetch.sh [6.1|6.12|6.12-arm64] ... : download one of Debian's kernels, its headers and
# linux-source with `apt-get download` and extract them (dpkg-deb -x, nothing is installed)
# into $FG_KERNEL_CACHE/<kernel release>/. Also installs what building and booting needs
# (Debian packages + virtme-ng from PyPI) unless FG_RIG_NO_INSTALL=1.
#
# 6.12-arm64: Debian 13 (trixie)'s arm64 kernel, fetched through an apt configuration of its
# own ($FG_KERNEL_CACHE/apt-trixie: the host's apt sources and dpkg are left alone), with the
# amd64 linux-kbuild of the same version (the host tools, fixdep and modpost), plus what
# arm64-roots.sh makes: the arm64 guest root and the trixie amd64 chroot the modules are
# built in (trixie's kbuild tools need glibc 2.38, the kernel's compiler is gcc-14).
#
# Versions are pinned below; if the archive no longer carries a pinned version
# (security updates replace them), the newest one the archive has for the series is
# used instead and a warning says so. A second run with everything cached downloads
# nothing and runs no apt-get update.
#
# Options: --download-only (no extraction), --no-install (same as FG_RIG_NO_INSTALL=1)
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# ---- pins ------------------------------------------------------------------------
# series -> "ABI PKGVER": the image is linux-image-<ABI>-amd64 at version PKGVER.
# FG_RIG_PIN_6_12 / FG_RIG_PIN_6_1="ABI PKGVER" override them.
declare -A PIN=(
    [6.12]="${FG_RIG_PIN_6_12:-6.12.117+deb12 6.12.117-1~deb12u1}"   # bookworm-security (linux-6.12 for Debian 12)
    [6.1]="${FG_RIG_PIN_6_1:-6.1.0-56 6.1.192-2}"                    # bookworm-security (Debian 12's own kernel)
    [6.12-arm64]="${FG_RIG_PIN_6_12_ARM64:-6.12.117+deb13 6.12.117-1}"  # trixie (Debian 13's kernel, arm64)
)
VIRTME_NG_PIN=${VIRTME_NG_PIN:-1.42}
HOST_PKGS=(gcc gcc-12 make flex bison libelf-dev libssl-dev bc dwarves kmod cpio xz-utils
           qemu-system-x86 busybox-static i2c-tools libiio-utils gpiod python3 python3-pip file)
# for 6.12-arm64: QEMU for aarch64, mmdebstrap and qemu-user (the guest root's maintainer
# scripts run through binfmt_misc), debian-archive-keyring for trixie's Release files
HOST_PKGS_ARM64=(qemu-system-arm mmdebstrap qemu-user-static binfmt-support debian-archive-keyring)

DOWNLOAD_ONLY=0
INSTALL=${FG_RIG_NO_INSTALL:-0}; [[ $INSTALL == 1 ]] && INSTALL=0 || INSTALL=1
SERIES=()
for a in "$@"; do
    case $a in
        --download-only) DOWNLOAD_ONLY=1 ;;
        --no-install) INSTALL=0 ;;
        6.1|6.12|6.12-arm64) SERIES+=("$a") ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) die "unknown argument '$a' (expected 6.1, 6.12, 6.12-arm64, --download-only, --no-install)" ;;
    esac
done
[[ ${#SERIES[@]} -gt 0 ]] || SERIES=(6.12 6.1)
need_root

APT_UPDATED=0
apt_update_once() {
    if [[ $APT_UPDATED == 0 ]]; then
        log "apt-get update"
        apt-get update -qq || die "apt-get update failed"
        APT_UPDATED=1
    fi
}

# The arm64 kernel comes from trixie, which the host's apt sources (Debian 12) do not have:
# apt with a sources list, lists and cache of its own under the rig's cache.
APT_TRIXIE=$FG_KERNEL_CACHE/apt-trixie
TRIXIE_MIRROR=${FG_RIG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
APT_TRIXIE_OPTS=(-o "Dir::Etc::SourceList=$APT_TRIXIE/sources.list" -o Dir::Etc::SourceParts=/nonexistent
    -o "Dir::State::Lists=$APT_TRIXIE/lists" -o "Dir::Cache=$APT_TRIXIE" -o Dir::Cache::pkgcache=
    -o Dir::Cache::srcpkgcache= -o APT::Architectures::=amd64 -o APT::Architectures::=arm64)
TRIXIE_UPDATED=0
trixie_update_once() {
    [[ $TRIXIE_UPDATED == 0 ]] || return 0
    mkdir -p "$APT_TRIXIE/lists/partial" "$APT_TRIXIE/archives/partial"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $TRIXIE_MIRROR trixie main" \
        >"$APT_TRIXIE/sources.list"
    log "apt-get update (trixie, amd64 + arm64, into $APT_TRIXIE)"
    apt-get "${APT_TRIXIE_OPTS[@]}" update -qq || die "apt-get update of trixie's lists failed"
    TRIXIE_UPDATED=1
}

ensure_host_tools() {
    local missing=() p
    local want=("${HOST_PKGS[@]}")
    [[ " ${SERIES[*]} " == *-arm64* ]] && want+=("${HOST_PKGS_ARM64[@]}")
    for p in "${want[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [[ ${#missing[@]} -gt 0 ]]; then
        apt_update_once
        log "installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
            || die "apt-get install ${missing[*]} failed"
    fi
    if ! command -v vng >/dev/null 2>&1; then
        # a venv of its own: Debian 12's pip refuses system-wide installs (PEP 668), and a
        # fresh machine may have no pip at all (lib.sh puts $FG_VIRTME_VENV/bin on PATH)
        log "installing virtme-ng==$VIRTME_NG_PIN from PyPI into $FG_VIRTME_VENV"
        if ! python3 -m venv "$FG_VIRTME_VENV" 2>/dev/null; then
            apt_update_once
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv \
                || die "apt-get install python3-venv failed"
            python3 -m venv "$FG_VIRTME_VENV" || die "python3 -m venv $FG_VIRTME_VENV failed"
        fi
        "$FG_VIRTME_VENV/bin/pip" install -q "virtme-ng==$VIRTME_NG_PIN" || "$FG_VIRTME_VENV/bin/pip" install -q virtme-ng \
            || die "pip install virtme-ng failed"
        PATH=$FG_VIRTME_VENV/bin:$PATH
        hash -r
        command -v vng >/dev/null || die "vng not on PATH after installing virtme-ng"
    fi
}

# has_version PKG VER -> true when the archive index lists PKG at VER (APT_OPTS: which index)
APT_OPTS=()
has_version() { apt-cache "${APT_OPTS[@]}" madison "$1" 2>/dev/null | awk -F'|' '{gsub(/ /,"",$2); print $2}' | grep -qxF "$2"; }

# version_for PKG PKGVER -> the version of PKG to download for the kernel at PKGVER: PKGVER itself;
# for linux-kbuild-6.1, whose one name spans every 6.1 ABI so that the archive keeps only its
# newest upload, the newest version of the same upstream release (6.1.192-3 for an image at
# 6.1.192-2: the same fixdep and modpost; the modules' vermagic comes from the headers).
version_for() {
    if has_version "$1" "$2"; then echo "$2"; return 0; fi
    [[ ${1%:*} == linux-kbuild-6.1 ]] || return 1
    local v best=""
    while read -r v; do
        [[ ${v%-*} == "${2%-*}" ]] || continue
        if [[ -z $best ]] || dpkg --compare-versions "$v" gt "$best"; then best=$v; fi
    done < <(apt-cache "${APT_OPTS[@]}" madison "$1" 2>/dev/null | awk -F'|' '{gsub(/ /,"",$2); print $2}')
    [[ -n $best ]] || return 1
    echo "$best"
}

# newest_abi SERIES -> "ABI PKGVER" of the newest amd64 image of that series that also
# has a linux-source-SERIES of the same version.
newest_abi() {
    local series=$1 best="" bestver="" p v abi
    local re
    if [[ $series == 6.1 ]]; then re='^linux-image-6\.1\.0-[0-9]+-amd64$'; else re='^linux-image-6\.12\.[0-9]+\+deb[0-9]+-amd64$'; fi
    while read -r p; do
        [[ $p =~ $re ]] || continue
        while read -r v; do
            has_version "linux-source-$series" "$v" || continue
            if [[ -z $bestver ]] || dpkg --compare-versions "$v" gt "$bestver"; then
                bestver=$v; abi=${p#linux-image-}; best="${abi%-amd64} $v"
            fi
        done < <(apt-cache madison "$p" | awk -F'|' '{gsub(/ /,"",$2); print $2}')
    done < <(apt-cache pkgnames "linux-image-$series" | sort -u)
    [[ -n $best ]] || return 1
    echo "$best"
}

# packages SERIES ABI -> the package names to download
packages() {
    local series=$1 abi=$2 kbuild
    if [[ $series == *-arm64 ]]; then
        # the amd64 kbuild: its fixdep/modpost run on this host, the arm64 one's would not
        echo "linux-image-$abi-arm64:arm64 linux-headers-$abi-arm64:arm64 linux-headers-$abi-common linux-kbuild-$abi:amd64 linux-source-${series%-arm64}"
        return
    fi
    if [[ $series == 6.1 ]]; then kbuild=linux-kbuild-6.1; else kbuild=linux-kbuild-$abi; fi
    echo "linux-image-$abi-amd64 linux-headers-$abi-amd64 linux-headers-$abi-common $kbuild linux-source-$series"
}

fix_headers() {
    # Debian's headers point at /usr/src and /lib/modules with absolute paths; rewrite
    # them into the extracted root so that `make -C <root>/usr/src/linux-headers-KREL M=...`
    # works without installing anything.
    local root=$1 krel=$2 abi=$3
    local hdr=$root/usr/src/linux-headers-$krel common=$root/usr/src/linux-headers-$abi-common
    [[ -f $hdr/Makefile && -d $common ]] || die "headers not found under $root/usr/src"
    sed -i "s#^include /usr/src/#include $root/usr/src/#" "$hdr/Makefile"
    local m
    for m in "$root"/lib/modules/"$krel" "$root"/usr/lib/modules/"$krel"; do
        [[ -d $m ]] || continue
        ln -sfn "$hdr" "$m/build"
        ln -sfn "$common" "$m/source"
    done
}

fetch_series() {
    local series=$1 abi pkgver pinabi pinver arch=amd64 update=apt_update_once
    read -r pinabi pinver <<<"${PIN[$series]}"
    APT_OPTS=()
    if [[ $series == *-arm64 ]]; then arch=arm64; update=trixie_update_once; APT_OPTS=("${APT_TRIXIE_OPTS[@]}"); fi
    local krel_pin="$pinabi-$arch"
    local dir="$FG_KERNEL_CACHE/$krel_pin"
    abi=$pinabi; pkgver=$pinver

    # Fully cached pin: nothing to resolve, nothing to download.
    if [[ -f $dir/.downloaded ]]; then
        log "$series: $krel_pin $pkgver already downloaded in $dir/debs"
    else
        $update
        local p ok=1
        for p in $(packages "$series" "$abi"); do version_for "$p" "$pkgver" >/dev/null || { ok=0; break; }; done
        if [[ $ok == 0 && $arch == arm64 ]]; then
            die "trixie no longer has the pinned arm64 kernel $pinabi ($pinver): pin a version it has (apt-cache madison in fetch.sh's apt-trixie) with FG_RIG_PIN_6_12_ARM64=\"ABI VERSION\""
        elif [[ $ok == 0 ]]; then
            local newest
            newest=$(newest_abi "$series") || die "the archive has no linux-image/linux-source pair for $series (is bookworm-security / bookworm-backports in the apt sources?)"
            read -r abi pkgver <<<"$newest"
            log "WARNING: pinned $series kernel $pinabi ($pinver) is gone from the archive; using $abi ($pkgver)"
            for p in $(packages "$series" "$abi"); do
                version_for "$p" "$pkgver" >/dev/null || die "$p=$pkgver not in the archive"
            done
            dir="$FG_KERNEL_CACHE/$abi-amd64"
        fi
        if [[ -f $dir/.downloaded ]]; then
            log "$series: $abi-amd64 already downloaded"
        else
            mkdir -p "$dir/debs"
            local specs=() all=()
            local v
            for p in $(packages "$series" "$abi"); do
                v=$(version_for "$p" "$pkgver") || die "$p=$pkgver not in the archive"
                [[ $v == "$pkgver" ]] || log "$series: $p $pkgver is gone from the archive; using $v (the same upstream release)"
                all+=("$p=$v")
                # a .deb left by an interrupted run is kept (apt-get download would fetch it again)
                compgen -G "$dir/debs/${p%:*}_${v//:/%3a}_*.deb" >/dev/null || specs+=("$p=$v")
            done
            local t0=$SECONDS
            if [[ ${#specs[@]} -gt 0 ]]; then
                log "$series: apt-get download ${specs[*]}"
                (cd "$dir/debs" && apt-get "${APT_OPTS[@]}" download -q "${specs[@]}" 2>&1 | grep -v 'unsandboxed' >&2) \
                    || die "apt-get download failed for $series"
            fi
            for p in "${all[@]}"; do
                local name=${p%%=*} ver=${p#*=}
                compgen -G "$dir/debs/${name%:*}_${ver//:/%3a}_*.deb" >/dev/null || die "$p was not downloaded"
            done
            log "$series: downloaded $(du -sh "$dir/debs" | cut -f1) in $((SECONDS - t0)) s"
            printf '%s\n' "${all[@]}" >"$dir/.downloaded"
        fi
    fi

    local krel="$abi-$arch"
    ln -sfn "$krel" "$FG_KERNEL_CACHE/$series"
    [[ $DOWNLOAD_ONLY == 1 ]] && return 0

    if [[ -f $dir/kernel.env ]]; then
        log "$series: already extracted in $dir"
        if [[ $arch == arm64 ]]; then "$RIG_DIR/arm64-roots.sh" || die "arm64-roots.sh failed"; fi
        return 0
    fi
    local t0=$SECONDS root=$dir/root deb
    rm -rf "$root" "$dir/src"; mkdir -p "$root" "$dir/src"
    for deb in "$dir"/debs/*.deb; do
        case $(basename "$deb") in linux-source-*) continue ;; esac
        log "$series: dpkg-deb -x $(basename "$deb")"
        dpkg-deb -x "$deb" "$root"
    done
    local kimg moddir
    kimg=$(ls "$root"/boot/vmlinuz-"$krel" 2>/dev/null) || die "no vmlinuz-$krel in the image package"
    if [[ -d $root/lib/modules/$krel/kernel ]]; then moddir=$root/lib/modules/$krel
    elif [[ -d $root/usr/lib/modules/$krel/kernel ]]; then moddir=$root/usr/lib/modules/$krel
    else die "no modules tree for $krel in the image package"; fi
    fix_headers "$root" "$krel" "$abi"
    log "$series: depmod for the extracted modules"
    depmod -b "${moddir%/lib/modules/*}" "$krel"
    if [[ $arch == arm64 ]]; then
        # virtio's 9p transport, 9p and overlayfs are modules in Debian's arm64 kernel: the
        # guest's initramfs (boot-arm64.sh) carries them, uncompressed for busybox's insmod
        local m f
        mkdir -p "$dir/initramfs-modules"
        for m in netfs 9pnet 9pnet_virtio 9p overlay; do
            f=$(find "$moddir/kernel" -name "$m.ko*" | head -n1)
            [[ -n $f ]] || die "no $m module in $krel"
            case $f in *.xz) xz -dc "$f" ;; *) cat "$f" ;; esac >"$dir/initramfs-modules/$m.ko"
        done
    fi

    # Only a few files of linux-source are needed (gpio-sim + irq_sim, test_power, and the two
    # IIO drivers for reference); take them out of the tarball without unpacking it whole.
    log "$series: taking gpio-sim, irq_sim and the IIO driver sources out of linux-source"
    local srcdeb tarball tmp
    srcdeb=$(ls "$dir"/debs/linux-source-*.deb)
    tmp=$(mktemp -d "$dir/srcdeb.XXXXXX")
    dpkg-deb -x "$srcdeb" "$tmp"
    tarball=$(ls "$tmp"/usr/src/linux-source-*.tar.xz) || die "no tarball in $(basename "$srcdeb")"
    local top
    top=$(basename "$tarball" .tar.xz)
    tar -C "$dir/src" --strip-components=1 -xJf "$tarball" \
        --wildcards "$top/drivers/gpio/gpio-sim.c" "$top/drivers/gpio/gpiolib.h" \
        "$top/kernel/irq/irq_sim.c" "$top/include/linux/irq_sim.h" \
        "$top/drivers/iio/accel/adxl345*" "$top/drivers/iio/imu/inv_mpu6050/*" \
        "$top/drivers/i2c/i2c-stub.c" "$top/drivers/power/supply/test_power.c"
    rm -rf "$tmp"

    cat >"$dir/kernel.env" <<EOF
SERIES=$series
KREL=$krel
ABI=$abi
PKGVER=$pkgver
KIMG=$kimg
MODDIR=$moddir
KHEADERS=$root/usr/src/linux-headers-$krel
KSRC=$dir/src
ARCH=$arch
EOF
    log "$series: extracted $krel in $((SECONDS - t0)) s ($(du -sh "$root" | cut -f1))"
    if [[ $arch == arm64 ]]; then "$RIG_DIR/arm64-roots.sh" || die "arm64-roots.sh failed"; fi
}

[[ $INSTALL == 1 ]] && ensure_host_tools
mkdir -p "$FG_KERNEL_CACHE"
for s in "${SERIES[@]}"; do fetch_series "$s"; done
for s in "${SERIES[@]}"; do
    [[ -f $FG_KERNEL_CACHE/$s/kernel.env ]] && echo "$s: $(grep -E '^(KREL|PKGVER)=' "$FG_KERNEL_CACHE/$s/kernel.env" | tr '\n' ' ')"
done
exit 0
