#!/bin/sh
# run-vm.sh VMLINUZ INITRD RESULTS [EXTRA_KERNEL_ARGS]
#
# Boots the test VM under qemu TCG (no KVM needed), wrapped in `timeout`.  The guest's console (ttyS0) goes to
# RESULTS.console; its results come back on the second serial port (ttyS1) as the file RESULTS.
# Exit status: 0 iff RESULTS has a "RESULT: N passed, 0 failed" line and no "not ok" line (except "# TODO"
#              ones: known gaps in confine, listed but not failures);
#              1 on a failed check, a missing RESULT line or a timeout; 77 (skip) without qemu, unless
#              CI=true or CONFINE_TESTS_MUST_WORK=1, where a missing qemu is an error.
# Environment: VM_TIMEOUT (seconds, default 300), VM_SMP (default 2), VM_MEM (MiB, default 1024), QEMU.
set -u

vmlinuz=${1:?usage: run-vm.sh VMLINUZ INITRD RESULTS [KERNEL_ARGS]}
initrd=${2:?usage: run-vm.sh VMLINUZ INITRD RESULTS [KERNEL_ARGS]}
results=${3:?usage: run-vm.sh VMLINUZ INITRD RESULTS [KERNEL_ARGS]}
extra=${4:-}
qemu=${QEMU:-qemu-system-x86_64}

must_work() { [ "${CI:-}" = true ] || [ "${CONFINE_TESTS_MUST_WORK:-}" = 1 ]; }
if ! command -v "$qemu" >/dev/null 2>&1; then
    if must_work; then
        echo "run-vm: $qemu not found (apt-get install qemu-system-x86); a skip is an error under CI=true / CONFINE_TESTS_MUST_WORK=1" >&2
        exit 1
    fi
    echo "SKIP: $qemu not found (apt-get install qemu-system-x86)"
    exit 77
fi

console=$results.console
boot() {
    rm -f "$results" "$console"
    start=$(date +%s.%N)
    timeout --foreground -k 5 "${VM_TIMEOUT:-300}" "$qemu" \
        -accel tcg,thread=multi -M pc -cpu max -m "${VM_MEM:-1024}" -smp "${VM_SMP:-2}" \
        -nographic -no-reboot -nodefaults \
        -serial "file:$console" -serial "file:$results" \
        -kernel "$vmlinuz" -initrd "$initrd" \
        -append "console=ttyS0 quiet panic=-1 $extra" </dev/null
    rc=$?
    end=$(date +%s.%N)
    secs=$(echo "$start $end" | awk '{printf "%.1f", $2 - $1}')
    # The serial file has \r\n line ends.
    if [ -f "$results" ]; then
        tr -d '\r' <"$results" >"$results.tmp" && mv "$results.tmp" "$results"
    fi
    [ -f "$console" ] && tr -d '\r' <"$console" >"$console.tmp" && mv "$console.tmp" "$console"
}
boot
# A guest kernel that panics while it boots, before the suite wrote a byte, met a fault of the emulator (TCG's
# cross-CPU code patching, seen as a stray int3 in the guest's own text), not a check: boot once more, keeping the
# first console. A panic once the suite runs is a failure like any other.
if [ ! -s "$results" ] && grep -q 'Kernel panic' "$console" 2>/dev/null; then
    mv "$console" "$console.first-boot"
    echo "# the guest kernel panicked while booting (console: $console.first-boot); booting again"
    boot
fi

cat "$results" 2>/dev/null
echo "# qemu exited with $rc after $secs s (console: $console)"

fail=0
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "run-vm: TIMEOUT: the VM did not power off within ${VM_TIMEOUT:-300} s" >&2
    fail=1
elif [ $rc -ne 0 ]; then
    echo "run-vm: qemu exited with status $rc" >&2
    fail=1
fi
if ! grep -q '^RESULT: [0-9]* passed, [0-9]* failed' "$results" 2>/dev/null; then
    echo "run-vm: no RESULT line from the VM" >&2
    fail=1
elif ! grep -q '^RESULT: [0-9]* passed, 0 failed' "$results"; then
    fail=1
fi
if grep '^not ok' "$results" 2>/dev/null | grep -qv '# TODO'; then
    echo "run-vm: failed checks:" >&2
    grep '^not ok' "$results" | grep -v '# TODO' >&2
    fail=1
fi
if grep -q '^not ok.*# TODO' "$results" 2>/dev/null; then
    echo "run-vm: known gaps in confine (TODO, not counted as failures):" >&2
    grep '^not ok.*# TODO' "$results" >&2
fi
if [ $fail -ne 0 ] && [ -s "$console" ]; then
    echo "--- last lines of the VM console ($console):" >&2
    tail -n 40 "$console" >&2
fi
exit $fail
