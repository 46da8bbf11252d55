#!/bin/sh
# get-kernel.sh KERNEL_PKG CACHE_DIR
#
# Fetches a Debian kernel image package WITHOUT installing it and prints the path of its vmlinuz.
#   KERNEL_PKG  a metapackage (linux-image-cloud-amd64 -> 6.1, linux-image-6.12-cloud-amd64 -> 6.12) or a
#               versioned package (linux-image-6.1.0-56-cloud-amd64); empty = linux-image-cloud-amd64.
#   CACHE_DIR   where unpacked kernels are kept: CACHE_DIR/<versioned package>/{boot,lib/modules}/...
#
# metapackage -> versioned package (apt-cache depends) -> apt-get download -> dpkg -x. The versioned name
# changes with every security update, so it is always resolved through the metapackage; an already unpacked
# version is reused. Without apt metadata (offline), the newest cached kernel of the same flavour is used.
set -eu

pkg=${1:-linux-image-cloud-amd64}
cache=${2:?usage: get-kernel.sh KERNEL_PKG CACHE_DIR}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

log() { echo "get-kernel: $*" >&2; }

# The versioned package behind a metapackage (the first linux-image-* dependency), or the name itself.
resolve() {
    dep=$(apt-cache depends "$1" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[^ ]*\)$/\1/p' | grep -v -- '-unsigned$' | head -n1 || true)
    if [ -n "$dep" ]; then
        echo "$dep"
    elif apt-cache show "$1" >/dev/null 2>&1; then
        echo "$1"
    fi
}

find_vmlinuz() {
    for f in "$1"/boot/vmlinuz-*; do
        [ -f "$f" ] && { echo "$f"; return 0; }
    done
    return 1
}

versioned=$(resolve "$pkg")
if [ -z "$versioned" ] && [ "$(id -u)" = 0 ]; then
    # A machine whose packages are all installed may never have fetched apt's lists: fetch them once and retry.
    apt-get update -qq >&2 || true
    versioned=$(resolve "$pkg")
fi
if [ -z "$versioned" ]; then
    # Offline or no apt lists: reuse the newest cached kernel whose name matches the metapackage's flavour.
    case $pkg in
    linux-image-6.12-*) pattern='linux-image-6.12*' ;;
    linux-image-cloud-amd64) pattern='linux-image-6.1.*-cloud-amd64' ;;
    *) pattern=$pkg ;;
    esac
    # shellcheck disable=SC2086
    versioned=$(cd "$cache" && ls -d $pattern 2>/dev/null | sort -V | tail -n1 || true)
    [ -n "$versioned" ] || { log "cannot resolve $pkg (no apt metadata? run apt-get update) and nothing cached in $cache"; exit 1; }
    log "apt cannot resolve $pkg; using the cached $versioned"
fi

dest=$cache/$versioned
if vmlinuz=$(find_vmlinuz "$dest"); then
    log "cached: $versioned"
    echo "$vmlinuz"
    exit 0
fi

tmp=$(mktemp -d "$cache/.dl.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp"   # apt-get download as root drops to _apt, which must be able to write here
log "downloading $versioned (resolved from $pkg)"
(cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$versioned" >&2)
deb=$(ls "$tmp"/*.deb)
mkdir -p "$tmp/root"
dpkg -x "$deb" "$tmp/root"
find_vmlinuz "$tmp/root" >/dev/null || { log "no boot/vmlinuz-* in $deb"; exit 1; }
rm -rf "$dest"
mv "$tmp/root" "$dest"
find_vmlinuz "$dest"
