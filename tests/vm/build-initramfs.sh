#!/bin/sh
# build-initramfs.sh [OPTIONS] OUT
#
# Builds the VM's initramfs as up to three concatenated gzip'd cpio archives (the kernel unpacks them in order,
# gotcha 9 of docs/vm-testing.md), so the parts that rarely change are cached and only the payload is rebuilt:
#   base      busybox-static with its applet links, a merged-/usr layout like the host's (/bin -> usr/bin ...),
#             /etc/passwd + /etc/group (root, tester 1000, nobody 65534), empty mount points.  Cached in CACHE_DIR,
#             keyed on the busybox binary and this script.
#   kernel    per kernel: loop.ko (decompressed), for the ext4 workspace that root's idmapped binds need on 6.1,
#             and overlay.ko, for `confine run` images (their directories are overlays).
#             Cached next to the unpacked kernel.
#   payload   /init (init.sh), /opt/tests/{checks.sh,probe}, confine and its shared libraries at their ldd paths.
#
# Options:
#   --cache DIR        where the base archive is cached (default: the directory of OUT)
#   --kernel-dir DIR   an unpacked kernel package (get-kernel.sh); adds the kernel archive
#   --confine PATH     the confine binary (dynamically linked: its ldd libraries are copied too)
#   --probe PATH       the static test probe, installed as /opt/tests/probe
#   --file SRC:DEST    any extra file (repeatable)
set -eu
umask 022   # every directory of the image 0755 (the root above all: gotcha 1), whatever the caller's umask

here=$(cd "$(dirname "$0")" && pwd)
cache='' kdir='' confine='' probe='' extra=''
while [ $# -gt 0 ]; do
    case $1 in
    --cache) cache=$2; shift 2 ;;
    --kernel-dir) kdir=$2; shift 2 ;;
    --confine) confine=$2; shift 2 ;;
    --probe) probe=$2; shift 2 ;;
    --file) extra="$extra $2"; shift 2 ;;
    -*) echo "build-initramfs: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
out=${1:?usage: build-initramfs.sh [--cache DIR] [--kernel-dir DIR] [--confine PATH] [--probe PATH] OUT}
[ -n "$cache" ] || cache=$(dirname "$out")
mkdir -p "$cache"

log() { echo "build-initramfs: $*" >&2; }

BUSYBOX=${BUSYBOX:-/bin/busybox}
[ -x "$BUSYBOX" ] || { log "busybox not found at $BUSYBOX (apt-get install busybox-static)"; exit 1; }
if ! "$BUSYBOX" --list 2>/dev/null | grep -qx cpio; then
    log "$BUSYBOX has no cpio applet (install busybox-static)"
    exit 1
fi
case $(file -L "$BUSYBOX" 2>/dev/null || echo static) in
*dynamically*) log "$BUSYBOX is dynamically linked; the VM needs busybox-static"; exit 1 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/confine-initramfs.XXXXXX")
trap 'rm -rf "$work"' EXIT

# pack DIR OUT: a newc archive of DIR's contents, all owned by root, gzip -1.  With INCLUDE_ROOT=1 the archive
# also carries "." (its mode becomes the VM's / : it must be 0755, gotcha 1); later archives must not carry "."
# at all, since the kernel re-applies a directory entry's mode to an existing directory.
pack() {
    if [ "${INCLUDE_ROOT:-0}" = 1 ]; then
        (cd "$1" && find . | LC_ALL=C sort | "$BUSYBOX" cpio -o -H newc -R 0:0 2>/dev/null) | gzip -1 >"$2.tmp"
    else
        (cd "$1" && find . -mindepth 1 | LC_ALL=C sort | "$BUSYBOX" cpio -o -H newc -R 0:0 2>/dev/null) | gzip -1 >"$2.tmp"
    fi
    mv "$2.tmp" "$2"
}

# --- base ------------------------------------------------------------------------------------------------------
key=$( (sha256sum "$BUSYBOX" "$0"; readlink /bin /sbin /lib /lib64 2>/dev/null || true) | sha256sum | cut -c1-16)
base=$cache/base-$key.cpio.gz
if [ -s "$base" ]; then
    log "base: cached $(basename "$base")"
else
    r=$work/base
    mkdir -m 0755 "$r"
    # Mirror the host's merged-/usr links, so the ldd paths of confine's libraries resolve the same way.
    mkdir -p "$r/usr/bin" "$r/usr/sbin" "$r/usr/lib" "$r/usr/lib64"
    for d in bin sbin lib lib64; do
        if [ -L "/$d" ]; then ln -s "$(readlink "/$d")" "$r/$d"; else mkdir -m 0755 "$r/$d"; fi
    done
    cp "$BUSYBOX" "$r/usr/bin/busybox"
    for a in $("$BUSYBOX" --list); do
        [ "$a" = busybox ] || ln -s busybox "$r/usr/bin/$a"
    done
    for d in dev proc sys run root home etc opt opt/tests mnt newroot var var/tmp srv; do mkdir -p "$r/$d"; done
    chmod 0700 "$r/root"
    mkdir -m 1777 "$r/tmp"
    chmod 1777 "$r/var/tmp"
    cat >"$r/etc/passwd" <<'PW'
root:x:0:0:root:/root:/bin/sh
tester:x:1000:1000:tester:/home/tester:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
PW
    cat >"$r/etc/group" <<'GR'
root:x:0:
tester:x:1000:
nogroup:x:65534:
GR
    echo /bin/sh >"$r/etc/shells"
    chmod 0644 "$r/etc/passwd" "$r/etc/group" "$r/etc/shells"
    rm -f "$cache"/base-*.cpio.gz
    INCLUDE_ROOT=1 pack "$r" "$base"
    log "base: built $(basename "$base") ($(du -k "$base" | cut -f1) KiB)"
fi
parts=$base

# --- kernel ----------------------------------------------------------------------------------------------------
if [ -n "$kdir" ]; then
    [ -d "$kdir/lib/modules" ] || { log "--kernel-dir $kdir: no lib/modules (not an unpacked kernel package)"; exit 1; }
    kpart=$kdir/confine-vm-kernel-v2.cpio.gz  # v2: loop.ko and overlay.ko
    if [ -s "$kpart" ]; then
        log "kernel: cached $kpart"
    else
        r=$work/kernel
        mkdir -p "$r/usr/lib/modules"
        for m in "$kdir"/lib/modules/*/kernel/drivers/block/loop.ko* "$kdir"/lib/modules/*/kernel/fs/overlayfs/overlay.ko*; do
            [ -f "$m" ] || continue
            name=$(basename "$m")
            name=${name%%.ko*}.ko
            case $m in
            *.xz) xz -dc "$m" >"$r/usr/lib/modules/$name" ;;
            *.zst) zstd -qdc "$m" >"$r/usr/lib/modules/$name" ;;
            *) cp "$m" "$r/usr/lib/modules/$name" ;;
            esac
        done
        chmod -R a+rX "$r"
        pack "$r" "$kpart"
        log "kernel: built $kpart"
    fi
    parts="$parts $kpart"
fi

# --- payload ---------------------------------------------------------------------------------------------------
r=$work/payload
mkdir -m 0755 "$r"
# install SRC DEST: copy (dereferencing) to DEST inside the image, creating 0755 parents.  A DEST whose parent
# is a symlink in the host's layout (/lib -> usr/lib) is rewritten to the real directory, so that this archive
# never carries a directory entry where the base has a symlink.
install_file() {
    src=$1 dest=$2
    dir=$(dirname "$dest")
    if [ -d "$dir" ]; then dir=$(cd "$dir" && pwd -P); fi
    mkdir -p "$r$dir"
    cp -L "$src" "$r$dir/$(basename "$dest")"
}
install_file "$here/init.sh" /init
chmod 0755 "$r/init"
install_file "$here/checks.sh" /opt/tests/checks.sh
install_file "$here/bench.sh" /opt/tests/bench.sh
if [ -n "$probe" ]; then
    install_file "$probe" /opt/tests/probe
fi
if [ -n "$confine" ]; then
    install_file "$confine" /usr/bin/confine
    # A debugoptimized build carries ~15 MB of DWARF: drop it from the copy (symbols stay), which makes the
    # archive 3x smaller and the guest's unpacking faster.
    if command -v strip >/dev/null 2>&1; then
        strip --strip-debug "$r/usr/bin/confine"
    fi
    # Shared libraries at the paths ldd prints (and the interpreter).
    for lib in $(ldd "$confine" | awk '/=> \// {print $3} /^\t\// {print $1}'); do
        install_file "$lib" "$lib"
    done
fi
for spec in $extra; do
    install_file "${spec%%:*}" "${spec#*:}"
done
find "$r" -type d -exec chmod 0755 {} +
chmod -R a+rX "$r"
payload=$work/payload.cpio.gz
pack "$r" "$payload"
parts="$parts $payload"

# shellcheck disable=SC2086
cat $parts >"$out.tmp"
mv "$out.tmp" "$out"
log "$out: $(du -k "$out" | cut -f1) KiB"
