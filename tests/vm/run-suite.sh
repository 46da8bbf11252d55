#!/bin/sh
# run-suite.sh KERNEL_PKG BUILD_DIR
#
# The whole VM suite for one kernel: fetch the kernel (cached), build the initramfs (busybox base cached, only
# the payload rebuilt), boot it under qemu TCG once, run every check (tests/vm/checks.sh) as root and as uid 1000,
# and exit 0 iff all passed.  Exit 77 (skip) when qemu, busybox-static or the kernel cannot be had -- unless
# CI=true or CONFINE_TESTS_MUST_WORK=1, where that is a failure.
#   KERNEL_PKG  linux-image-cloud-amd64 (6.1) | linux-image-6.12-cloud-amd64 (6.12) | a versioned package
#   BUILD_DIR   the meson build directory (confine, tests/integration/confine-test-probe, tests/vm/confine-vm-helper;
#               the environment variables CONFINE, PROBE and VM_HELPER override those paths).  The initramfs and
#               the results go to BUILD_DIR/tests/vm/KERNEL_PKG/.
# Environment: CONFINE_VM_CACHE (kernels + busybox base; default /tmp/confine-vm), VM_TIMEOUT (default 300 s),
#              CONFINE_VM_KERNEL_ARGS (extra kernel command line, e.g. confine.abi=N), VM_EXTRA_FILES (more
#              "SRC:DEST" files for the initramfs, space-separated), VM_OUT (results directory name).
set -u
here=$(cd "$(dirname "$0")" && pwd)
pkg=${1:?usage: run-suite.sh KERNEL_PKG BUILD_DIR}
build=$(cd "${2:?usage: run-suite.sh KERNEL_PKG BUILD_DIR}" && pwd)
cache=${CONFINE_VM_CACHE:-/tmp/confine-vm}

must_work() { [ "${CI:-}" = true ] || [ "${CONFINE_TESTS_MUST_WORK:-}" = 1 ]; }
skip() {
    if must_work; then
        echo "run-suite: FAIL (would skip, but skipping is an error under CI=true / CONFINE_TESTS_MUST_WORK=1): $*" >&2
        exit 1
    fi
    echo "SKIP: $*"
    exit 77
}
now() { date +%s.%N; }
since() { echo "$1 $(now)" | awk '{printf "%.1f", $2 - $1}'; }

command -v "${QEMU:-qemu-system-x86_64}" >/dev/null 2>&1 || skip "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"
busybox=${BUSYBOX:-/bin/busybox}
{ [ -x "$busybox" ] && "$busybox" --list 2>/dev/null | grep -qx cpio; } ||
    skip "busybox-static not found at $busybox (apt-get install busybox-static)"

confine=${CONFINE:-$build/confine}
probe=${PROBE:-$build/tests/integration/confine-test-probe}
for f in "$confine" "$probe"; do
    [ -x "$f" ] || { echo "run-suite: $f not built (ninja -C $build)" >&2; exit 1; }
done

out=$build/tests/vm/${VM_OUT:-$pkg}
mkdir -p "$out"
t_all=$(now)

# 1. kernel
t=$(now)
vmlinuz=$("$here/get-kernel.sh" "$pkg" "$cache/kernels") || skip "cannot fetch the kernel $pkg (no apt access and not cached in $cache/kernels)"
kdir=$(dirname "$(dirname "$vmlinuz")")
echo "# kernel: $vmlinuz ($(since "$t") s)"

# 2. initramfs
t=$(now)
helper=${VM_HELPER:-$build/tests/vm/confine-vm-helper}
if [ ! -x "$helper" ]; then
    # Run by hand before meson built it: compile it here (static, like the probe).
    helper=$out/confine-vm-helper
    ${CC:-cc} -O2 -static -o "$helper" "$here/vm-helper.c" || { echo "run-suite: cannot build vm-helper.c" >&2; exit 1; }
fi
BUSYBOX=$busybox "$here/build-initramfs.sh" --cache "$cache" --kernel-dir "$kdir" --confine "$confine" --probe "$probe" \
    --file "$helper:/opt/tests/vm-helper" $(for f in ${VM_EXTRA_FILES:-}; do printf -- '--file %s ' "$f"; done) \
    "$out/initrd.gz" || exit 1
echo "# initramfs: $out/initrd.gz ($(since "$t") s)"

# 3. boot + checks + poweroff
t=$(now)
"$here/run-vm.sh" "$vmlinuz" "$out/initrd.gz" "$out/results.txt" "${CONFINE_VM_KERNEL_ARGS:-}"
rc=$?
echo "# vm: $(since "$t") s; whole suite for $pkg: $(since "$t_all") s; results: $out/results.txt"
exit $rc
