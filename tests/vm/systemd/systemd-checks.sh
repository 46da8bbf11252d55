#!/bin/sh
# As uid 1000 in a login session under a real systemd: the session's scope is not the user's to manage, so
# --pids/--memory must come from the user's manager over D-Bus (a transient scope with Delegate=yes).
set -u
T=$(mktemp -d)
WS=$HOME/ws
mkdir -p "$WS"
ok() { echo "ok - systemd: $*"; }
notok() { echo "not ok - systemd: $*"; echo "#   out: $(head -c 300 "$T/out" | tr '\n' '|')"; echo "#   err: $(head -c 600 "$T/err" | tr '\n' '|')"; }
check() { if [ "$1" = 0 ]; then ok "$2"; else notok "$2"; fi; }

cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
case $cg in */session-*.scope) true ;; *) false ;; esac
check $? "the checks run in a login session's scope, which is not delegated ($cg)"
[ -n "${XDG_RUNTIME_DIR:-}" ] && [ -S "$XDG_RUNTIME_DIR/bus" ]
check $? "pam_systemd gave the session XDG_RUNTIME_DIR with a user bus (${XDG_RUNTIME_DIR:-unset})"

confine explain --pids 16 -w "$WS" -- true >"$T/out" 2>"$T/err"
grep -q 'cgroup v2 (systemd)' "$T/out"
check $? "confine explain: the limits are kept by cgroup v2 (systemd)"

confine --report "$T/report.json" --pids 16 -w "$WS" -- /opt/tests/vm-helper forks 100 >"$T/out" 2>"$T/err"
rc=$?
k=$(sed -n 's/^FORKS \([0-9]*\) .*/\1/p' "$T/out")
[ $rc = 0 ] && grep -q '^FORKS [0-9]* EAGAIN$' "$T/out" && [ "${k:-99}" -lt 16 ] && grep -q '"pids_denied":[1-9]' "$T/report.json"
check $? "--pids 16 through the user manager's transient scope: forks stop with EAGAIN after ${k:-?}"

confine --memory 64m -w "$WS" -- /opt/tests/vm-helper alloc 256 >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 137 ] && grep -q 'killed by the memory limit (64.0 MiB' "$T/err"
check $? "--memory 64m through the transient scope: 256 MiB is killed, exit 137 (rc=$rc)"

sleep 1
systemctl --user list-units --all --no-legend 'confine-*' >"$T/out" 2>"$T/err"
[ ! -s "$T/out" ]
check $? "no confine scope left in the user manager after the runs"
echo "# checks done: systemd"
