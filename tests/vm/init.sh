#!/bin/sh
# /init of the test VM (busybox ash).  See tests/vm/README.md and docs/vm-testing.md.
#
# Stage 1 (the kernel's rootfs): copy the image into a tmpfs and switch_root to it.  pivot_root(2) -- which
# confine's full mode uses -- fails with EINVAL while / is the initramfs rootfs itself (the rootfs mount has no
# parent), so the tests must run on a root that is an ordinary mount.
# Stage 2: mount proc/sys/dev/cgroup2, set up the cgroup tree, the test user and an ext4 workspace for root,
# run tests/vm/checks.sh as root and as uid 1000, report on the 2nd serial port, power off.
#
# Kernel command line switches: confine.bootonly (boot, report, power off), confine.abi=N (the Landlock ABI
# the checks expect, instead of the per-kernel table in checks.sh), confine.noswitchroot (stay on the rootfs:
# shows full mode failing at pivot_root).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
umask 022

noswitch=
if [ "${1:-}" != stage2 ]; then
    mount -t proc proc /proc
    grep -q confine.noswitchroot /proc/cmdline && noswitch=1
    umount /proc
fi
if [ "${1:-}" != stage2 ] && [ -z "$noswitch" ]; then
    mount -t tmpfs -o mode=0755 newroot /newroot
    for e in /*; do
        case $e in
        /newroot) ;;
        /proc | /sys | /dev | /run | /tmp) mkdir -p "/newroot$e" ;;
        *) cp -a "$e" /newroot/ ;;
        esac
    done
    chmod 1777 /newroot/tmp
    exec switch_root /newroot /init stage2
    echo "init: switch_root failed" >&2
    poweroff -f
fi

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts /dev/pts
ln -sf pts/ptmx /dev/ptmx
mount -t tmpfs -o mode=1777 shm /dev/shm
mount -t tmpfs -o mode=1777 tmp /tmp
mount -t tmpfs -o mode=0755 run /run
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
dmesg -n 1
hostname confine-vm
ip link set lo up

exec 3>/dev/ttyS1
LOG=/run/results.log
: >"$LOG"
chmod 0644 "$LOG"
say() { echo "$*" | tee -a "$LOG" >&3; echo "$*"; }

cmdline=$(cat /proc/cmdline)
uptime_s() { cut -d' ' -f1 /proc/uptime; }
echo "# kernel $(uname -r), booted in $(uptime_s) s" >&3

if [ -n "${cmdline##*confine.bootonly*}" ]; then :; else
    say "ok - boot only ($(uname -r))"
    say "RESULT: 1 passed, 0 failed"
    sync
    poweroff -f
fi

# --- cgroup v2: controllers for the whole tree, and a subtree delegated to the test user (gotcha 13) --------
setup_ok=1
setup_fail() { say "not ok - setup: $*"; setup_ok=0; }
cg=/sys/fs/cgroup
echo "+pids +memory +cpu" >"$cg/cgroup.subtree_control" || setup_fail "enable +pids +memory +cpu at the root"
mkdir -p "$cg/ci" "$cg/ci/runner"
echo "+pids +memory +cpu" >"$cg/ci/cgroup.subtree_control" || setup_fail "enable controllers in ci/"
chown 1000:1000 "$cg/ci" "$cg/ci/cgroup.procs" "$cg/ci/cgroup.subtree_control" "$cg/ci/cgroup.threads"
chown -R 1000:1000 "$cg/ci/runner"

# --- the test user's home and workspace (tmpfs: an unprivileged run needs no idmapped mount) ----------------
mkdir -p /home/tester/ws
echo "tester-secret" >/home/tester/secret.txt
chown -R 1000:1000 /home/tester
chmod 0755 /home/tester

# --- overlayfs, for `confine run` images (their directories are overlays); a module in Debian's cloud kernels.
grep -qw overlay /proc/filesystems || insmod /usr/lib/modules/overlay.ko || setup_fail "insmod overlay.ko (confine run images)"

# --- root's workspace on ext4: run by root, confine binds the workspace idmapped (host uid 65534 inside), and
# tmpfs only supports idmapped mounts from Linux 6.3 on.  ext4 does on every kernel we test.
echo "root-secret" >/root/secret.txt
if insmod /usr/lib/modules/loop.ko 2>/dev/null || [ -e /dev/loop0 ]; then
    i=0
    while [ ! -b /dev/loop0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    truncate -s 48M /run/ext4.img &&
        losetup /dev/loop0 /run/ext4.img &&
        mke2fs -q /dev/loop0 >/dev/null 2>&1 &&
        mkdir -p /mnt/ext4 &&
        mount -t ext4 /dev/loop0 /mnt/ext4 ||
        setup_fail "ext4 workspace for root (loop0 + mke2fs + mount -t ext4)"
    rm -rf /mnt/ext4/lost+found
    mkdir -p /mnt/ext4/ws
else
    setup_fail "insmod loop.ko (ext4 workspace for root)"
fi
[ $setup_ok = 1 ] && say "ok - setup: cgroup2 (nsdelegate, +pids +memory +cpu, ci/ delegated to uid 1000), workspaces, loop ext4"

abi=$(echo "$cmdline" | sed -n 's/.*confine\.abi=\([0-9]*\).*/\1/p')
export CONFINE_VM_EXPECT_ABI="$abi"
# Landlock's ptrace rules must be the only thing between the sandbox and an outside process (Yama's default 1
# would refuse a non-descendant ptrace by itself).
[ -w /proc/sys/kernel/yama/ptrace_scope ] && echo 0 >/proc/sys/kernel/yama/ptrace_scope

as_user() {
    # Moved into the delegated leaf by root (the user may not write the root cgroup's cgroup.procs), then su.
    # su execs the shell: exec resets "dumpable", which the setuid had cleared (gotcha 2).
    sh -c 'echo $$ >/sys/fs/cgroup/ci/runner/cgroup.procs && exec su -s /bin/sh tester -c "$0 $*"' "$@"
}

# start_phase LABEL CMD...: run one checks.sh invocation in the background (the VM has 2 vCPUs and multi-threaded
# TCG, so two phases at once finish sooner); its lines go to the console as they come and to /run/phase.LABEL.
started=
start_phase() {
    label=$1
    shift
    echo "# phase $label: start at $(uptime_s) s" >&3
    ( "$@" 2>&1; echo "# phase $label: end at $(uptime_s) s" ) | tee "/run/phase.${label%%/*}.${label##*/}" >/dev/console &
    started="$started $label"
}
# finish_phases: wait for the started phases, then report them in order on the results port.
finish_phases() {
    wait
    for label in $started; do
        f="/run/phase.${label%%/*}.${label##*/}"
        tee -a "$LOG" <"$f" >&3
        if ! grep -q "^# checks done: $label\$" "$f"; then
            say "not ok - $label: checks.sh did not finish (crashed or hung)"
        fi
    done
    started=
}

# confine.bench (bench/cgroup-vm): time start-up with and without limits instead of running the checks.
if [ -z "${cmdline##*confine.bench*}" ]; then
    start_phase root/bench sh /opt/tests/bench.sh root
    finish_phases
    start_phase user/bench as_user sh /opt/tests/bench.sh user
    finish_phases
    passed=$(grep -c '^ok ' "$LOG")
    failed=$(grep -c '^not ok ' "$LOG")
    echo "RESULT: $passed passed, $failed failed" >&3
    sync
    poweroff -f
fi

start_phase root/main sh /opt/tests/checks.sh root main
start_phase user/main as_user sh /opt/tests/checks.sh user main
finish_phases

# The degradation ladder without user namespaces: confine must refuse, or fall back with --best-effort.
echo 0 >/proc/sys/user/max_user_namespaces
start_phase root/nouserns sh /opt/tests/checks.sh root nouserns
start_phase user/nouserns as_user sh /opt/tests/checks.sh user nouserns
finish_phases
echo 15000 >/proc/sys/user/max_user_namespaces
if [ -w /proc/sys/kernel/unprivileged_userns_clone ]; then
    echo 0 >/proc/sys/kernel/unprivileged_userns_clone
    start_phase user/nouclone as_user sh /opt/tests/checks.sh user nouclone
    finish_phases
    echo 1 >/proc/sys/kernel/unprivileged_userns_clone
fi

# A user outside any delegated subtree (still in the root cgroup): limits must be refused, or become rlimits.
start_phase user/nocgroup su -s /bin/sh tester -c "sh /opt/tests/checks.sh user nocgroup"
finish_phases

passed=$(grep -c '^ok ' "$LOG")
todo=$(grep -c '^not ok .*# TODO' "$LOG")
failed=$(grep '^not ok ' "$LOG" | grep -vc '# TODO')
echo "# finished at $(uptime_s) s; known gaps (TODO): $todo" >&3
echo "RESULT: $passed passed, $failed failed" >&3
echo "RESULT: $passed passed, $failed failed"
sync
poweroff -f
