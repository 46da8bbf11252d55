#!/bin/sh
# Root side: wait for the user manager, run the checks as the user in a login session (su + pam_systemd: a
# session scope, which is *not* delegated), send the results to the second serial port, power off.
out=/dev/ttyS1
say() { echo "$*" >"$out"; echo "$*"; }
for i in $(seq 100); do
    [ -S /run/user/1000/bus ] && break
    sleep 0.2
done
[ -S /run/user/1000/bus ] && say "ok - setup: the user manager of uid 1000 answers on /run/user/1000/bus" ||
    say "not ok - setup: no user manager bus for uid 1000"
su - tester -c "sh /opt/tests/systemd-checks.sh" >/run/checks.log 2>&1
cat /run/checks.log >"$out"
cat /run/checks.log
passed=$(grep -c '^ok ' /run/checks.log)
failed=$(grep -c '^not ok ' /run/checks.log)
[ -S /run/user/1000/bus ] && passed=$((passed + 1)) || failed=$((failed + 1))
say "RESULT: $passed passed, $failed failed"
sync
systemctl poweroff --force --force
