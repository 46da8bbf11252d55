#!/bin/sh
# run-systemd-suite.sh BUILD_DIR
#
# confine's limits against a real systemd: a Debian bookworm root file system (debootstrap, cached) with systemd,
# dbus and dbus-user-session, booted under qemu TCG with systemd as init on the 6.12 cloud kernel. A lingering
# user (uid 1000) has a user manager; a root service su's into that user (pam_systemd: a session scope, not
# delegated) and runs systemd-checks.sh, which needs the user manager's transient scope over D-Bus.
# Exit 77 (skip) without qemu, debootstrap or apt access -- unless CI=true or CONFINE_TESTS_MUST_WORK=1.
# Environment: CONFINE_VM_CACHE (default /tmp/confine-vm), CONFINE, PROBE, VM_HELPER (binaries), VM_TIMEOUT.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run-systemd-suite.sh BUILD_DIR}" && pwd)
cache=${CONFINE_VM_CACHE:-/tmp/confine-vm}

must_work() { [ "${CI:-}" = true ] || [ "${CONFINE_TESTS_MUST_WORK:-}" = 1 ]; }
skip() {
    if must_work; then
        echo "run-systemd-suite: FAIL (would skip, but skipping is an error under CI=true): $*" >&2
        exit 1
    fi
    echo "SKIP: $*"
    exit 77
}
now() { date +%s.%N; }
since() { echo "$1 $(now)" | awk '{printf "%.1f", $2 - $1}'; }
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot)"
command -v "${QEMU:-qemu-system-x86_64}" >/dev/null 2>&1 || skip "qemu-system-x86_64 not found"
command -v debootstrap >/dev/null 2>&1 || skip "debootstrap not found (apt-get install debootstrap)"
busybox=${BUSYBOX:-/bin/busybox}
[ -x "$busybox" ] || skip "busybox-static not found at $busybox"
confine=${CONFINE:-$build/confine}
probe=${PROBE:-$build/tests/integration/confine-test-probe}
helper=${VM_HELPER:-$build/tests/vm/confine-vm-helper}
for f in "$confine" "$probe" "$helper"; do
    [ -x "$f" ] || { echo "run-systemd-suite: $f not built (ninja -C $build)" >&2; exit 1; }
done
out=$build/tests/vm/systemd
mkdir -p "$out"
t_all=$(now)

t=$(now)
vmlinuz=$("$here/../get-kernel.sh" linux-image-6.12-cloud-amd64 "$cache/kernels") || skip "cannot fetch the 6.12 kernel"
echo "# kernel: $vmlinuz ($(since "$t") s)"

# 1. The root file system, made once (about 1 min, 250 MB) and kept in the cache.
rootfs=$cache/sd-rootfs-bookworm-v1
if [ ! -d "$rootfs" ]; then
    t=$(now)
    rm -rf "$rootfs.tmp"
    debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus,dbus-user-session,libpam-systemd,procps \
        bookworm "$rootfs.tmp" http://deb.debian.org/debian >"$out/debootstrap.log" 2>&1 ||
        { tail -5 "$out/debootstrap.log"; skip "debootstrap failed (no access to deb.debian.org?)"; }
    rm -rf "$rootfs.tmp"/usr/share/doc/* "$rootfs.tmp"/usr/share/man/* "$rootfs.tmp"/usr/share/locale/* \
        "$rootfs.tmp"/var/cache/apt/archives/*.deb "$rootfs.tmp"/var/lib/apt/lists/*
    mv "$rootfs.tmp" "$rootfs"
    echo "# rootfs: debootstrap ($(since "$t") s)"
fi

# 2. This run's copy: the test user (lingering, so its manager starts at boot), the checks, confine.
t=$(now)
stage=$out/stage
rm -rf "$stage"
cp -a "$rootfs" "$stage"
chroot "$stage" useradd -m -u 1000 -s /bin/sh tester
mkdir -p "$stage/var/lib/systemd/linger" "$stage/opt/tests" "$stage/etc/systemd/system/multi-user.target.wants"
touch "$stage/var/lib/systemd/linger/tester"
install -m 0755 "$here/init" "$stage/init"
install -m 0755 "$here/run-checks.sh" "$here/systemd-checks.sh" "$stage/opt/tests/"
install -m 0755 "$probe" "$stage/opt/tests/probe"
install -m 0755 "$helper" "$stage/opt/tests/vm-helper"
install -m 0755 "$confine" "$stage/usr/bin/confine"
install -m 0644 "$here/confine-checks.service" "$stage/etc/systemd/system/"
ln -sf ../confine-checks.service "$stage/etc/systemd/system/multi-user.target.wants/confine-checks.service"
# No login prompts on the consoles: the checks are the only thing that runs.
for u in serial-getty@ttyS0.service serial-getty@ttyS1.service getty@tty1.service; do ln -sf /dev/null "$stage/etc/systemd/system/$u"; done
(cd "$stage" && find . | "$busybox" cpio -o -H newc 2>/dev/null | gzip -1 >"$out/initrd.gz")
rm -rf "$stage"
echo "# initramfs: $out/initrd.gz, $(du -h "$out/initrd.gz" | cut -f1) ($(since "$t") s)"

# 3. Boot; systemd runs the checks and powers off.
t=$(now)
VM_MEM=${VM_MEM:-2048} VM_TIMEOUT=${VM_TIMEOUT:-600} "$here/../run-vm.sh" "$vmlinuz" "$out/initrd.gz" "$out/results.txt" \
    "systemd.show_status=0 rdinit=/init"
rc=$?
echo "# vm: $(since "$t") s; whole systemd suite: $(since "$t_all") s"
exit $rc
