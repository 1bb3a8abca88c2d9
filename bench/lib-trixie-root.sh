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
        [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
        [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64
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
