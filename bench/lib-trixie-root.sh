# Shared by bench/apt-repo.sh and bench/owner-path.sh (source it): the package, the signed
# repository on a loopback static server, a fresh Debian trixie root and running in it.
# Expects: $repo (the repository), $work (a scratch folder), $arch, $deb (may be empty),
# `result`/`check` (PASS/FAIL counters), and an EXIT trap that calls trixie_cleanup.

servers=()
trixie_cleanup() {
    for p in "${servers[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
}

# trixie_package NAME: sets $deb to a package of this tree's program when none was given: the
# release program (tools/build-release, built if missing: 12 to 60 min on a loaded machine),
# or with FALLGUARD_DEBUG_PACKAGE=1 the debug program (.build/debug/fallguard, as built),
# whose Swift runtime in_root then bind-mounts. Byte-identical when made twice.
trixie_package() {
    [ -n "$deb" ] && return 0
    local binary=$repo/.build/release/fallguard
    [ "${FALLGUARD_DEBUG_PACKAGE:-}" = 1 ] && binary=$repo/.build/debug/fallguard
    if [ ! -x "$binary" ]; then
        echo "$1: building the release program (tools/build-release) ..."
        local s; s=$(date +%s)
        tools/build-release fallguard >"$work/build.log" 2>&1 || { tail -n 20 "$work/build.log"; exit 1; }
        echo "$1: release program built in $(( $(date +%s) - s )) s"
    fi
    export SOURCE_DATE_EPOCH; SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
    local s; s=$(date +%s)
    deb=$(deploy/build-deb.sh --arch "$arch" --binary "$binary" --output "$work/debs" 2>"$work/build-deb.log") ||
        { cat "$work/build-deb.log"; exit 1; }
    echo "$1: $(basename "$deb") built in $(( $(date +%s) - s )) s, $(du -k "$deb" | cut -f1) KiB ($( [ "$binary" = "$repo/.build/release/fallguard" ] && echo release || echo debug) program)"
    local again; again=$(deploy/build-deb.sh --arch "$arch" --binary "$binary" --output "$work/debs-again" 2>/dev/null)
    check "same program and SOURCE_DATE_EPOCH: byte-identical .deb ($(sha256sum "$deb" | cut -c1-16))" cmp -s "$deb" "$again"
    unset SOURCE_DATE_EPOCH
}

# serve DIR PORT: a static file server on loopback, as any web host would serve the folder.
serve() {
    python3 -m http.server --bind 127.0.0.1 --directory "$1" "$2" >>"$work/http-$2.log" 2>&1 &
    servers+=($!)
    for _ in $(seq 50); do curl -fs -o /dev/null "http://127.0.0.1:$2/" && return 0; sleep 0.1; done
    return 1
}

# trixie_root: a fresh trixie $arch root in $root, from the base made once into
# ${FALLGUARD_APT_CACHE:-~/.cache/fallguard-apt} (mmdebstrap: what an owner's Raspberry Pi OS Lite
# has that the benches use: apt, curl, ca-certificates); apt answers yes as the owner would; a
# debug program's Swift runtime noted in $runtime for in_root.
trixie_root() {
    local cache=${FALLGUARD_APT_CACHE:-$HOME/.cache/fallguard-apt}
    local base="$cache/trixie-$arch-base.tar"
    if [ "$arch" != "$(dpkg --print-architecture)" ]; then
        # Another architecture's programs run through qemu-user and binfmt_misc; mmdebstrap
        # checks that with arch-test.
        local missing=()
        command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
        command -v update-binfmts >/dev/null || missing+=(binfmt-support)
        command -v arch-test >/dev/null || missing+=(arch-test)
        [ ${#missing[@]} = 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
        [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
        [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64
        arch-test "$arch" >/dev/null || { echo "$arch programs do not run here (arch-test $arch; qemu-user-static, binfmt_misc)" >&2; exit 1; }
    fi
    if [ ! -s "$base" ]; then
        mkdir -p "$cache"
        local s; s=$(date +%s)
        mmdebstrap --arch="$arch" --variant=apt --include=ca-certificates,curl \
            trixie "$base.tmp.tar" http://deb.debian.org/debian >"$work/mmdebstrap.log" 2>&1 ||
            { tail -n 5 "$work/mmdebstrap.log"; exit 1; }
        mv "$base.tmp.tar" "$base"
        echo "trixie $arch base made in $(( $(date +%s) - s )) s ($(du -m "$base" | cut -f1) MB)"
    fi
    root="$work/root"
    mkdir -p "$root" "$work/run"
    tar -xf "$base" -C "$root"
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    echo 'APT::Get::Assume-Yes "true";' > "$root/etc/apt/apt.conf.d/90bench-yes"
    # A debug program loads the Swift runtime from the toolchain it was built with (its RUNPATH):
    # that folder is bind-mounted read-only at the same path in the root. The release package
    # (static runtime) needs nothing of the kind; apt's part is the same.
    runtime=""
    dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/bin/fallguard > "$work/program"
    if readelf -d "$work/program" | grep -q 'NEEDED.*libswiftCore'; then
        local dir
        for dir in $(readelf -d "$work/program" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p' | tr ':' ' '); do
            [ -e "$dir/libswiftCore.so" ] && { runtime=$dir; break; }
        done
        [ -n "$runtime" ] || { echo "the program needs libswiftCore.so and its RUNPATH has none" >&2; exit 1; }
        echo "the package's program is a debug build: the toolchain's runtime ($runtime) is bind-mounted read-only into the root"
    fi
    rm -f "$work/program"
}

# in_root CMD...: CMD in the root (chroot, private mounts: /proc, the host's or the emulators'
# /dev and /sys, $work/run as /run so that it lasts from one command to the next). Paths in
# $IN_ROOT_BIND (space-separated) are bind-mounted at the same place (the GPIO emulator's
# library and socket folder).
in_root() {
    unshare --mount --propagation private -- sh -c 'r="$0"; rt="$1"; run="$2"; binds="$3"; shift 3
        mount -t proc proc "$r/proc"; mount --rbind /dev "$r/dev"; mount --rbind /sys "$r/sys"; mount --bind "$run" "$r/run"
        if [ -n "$rt" ]; then mkdir -p "$r$rt" && mount --bind -o ro "$rt" "$r$rt"; fi
        for b in $binds; do mkdir -p "$r$b" && mount --bind "$b" "$r$b"; done
        exec chroot "$r" "$@"' \
        "$root" "$runtime" "$work/run" "${IN_ROOT_BIND:-}" env DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# next_version: $deb repacked as the next patch version (the same program), as $deb2 / $v1 / $v2:
# what a later release looks like to apt.
next_version() {
    v1=$(dpkg-deb -f "$deb" Version)
    v2=$(echo "$v1" | awk -F. -v OFS=. '{ $NF = $NF + 1; print }')
    rm -rf "$work/v2"
    dpkg-deb -R "$deb" "$work/v2"
    sed -i "s/^Version: .*/Version: $v2/" "$work/v2/DEBIAN/control"
    deb2="$work/fallguard_${v2}_$arch.deb"
    dpkg-deb --root-owner-group -Zgzip --build "$work/v2" "$deb2" >/dev/null
    rm -rf "$work/v2"
}

# tampered_copy NAME: a copy of $site served on a port of its own, the root's source pointed at
# it (a web host someone changed); sets $attack_dir.
tampered_copy() {
    local dir="$work/site-$1" p=$((port + RANDOM % 1000 + 1))
    rm -rf "$dir"; cp -a "$site" "$dir"
    serve "$dir" "$p" || return 1
    sed -i "s|^URIs: .*|URIs: http://127.0.0.1:$p|" "$root/etc/apt/sources.list.d/fallguard.sources"
    attack_dir=$dir
}

# tamper_package FILE: other bytes in the middle of FILE, same size.
tamper_package() {
    printf 'EVIL' | dd of="$1" bs=1 seek=$(( $(stat -c %s "$1") / 2 )) conv=notrunc status=none
}

# preload_for_root SO: the GPIO emulator's preload library SO (tools/gpio-emulator), for programs
# in the root: the host's own, bind-mounted (IN_ROOT_BIND), when the root is this machine's
# architecture; else built for the root's (aarch64, with tools/arm64-sdk's sysroot) and put at
# the same path inside the root, where the root's loader finds it.
preload_for_root() {
    if [ "$arch" = "$(dpkg --print-architecture)" ]; then
        IN_ROOT_BIND="${IN_ROOT_BIND:+$IN_ROOT_BIND }$(dirname "$1")"
        return
    fi
    [ "$arch" = arm64 ] || { echo "no GPIO emulator library for $arch" >&2; return 1; }
    mkdir -p "$root$(dirname "$1")"
    /opt/swift/usr/bin/clang --target=aarch64-linux-gnu --sysroot="$(tools/arm64-sdk libs 2>/dev/null)" -fuse-ld=lld \
        -O2 -shared -fPIC -Wall -Wextra -o "$root$1" tools/gpio-emulator/fakegpio.c -ldl -lpthread
}
