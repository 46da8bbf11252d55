#!/bin/sh
V=$1 P=$2
echo "# === $V/$P uid=$(id -u) cg=$(cat /proc/self/cgroup)"
if [ "$V" = root ]; then WS=/mnt/ext4/ws; H=/root; else WS=/home/tester/ws; H=/home/tester; fi
x() { echo "# \$ $*"; t0=$(cut -d' ' -f1 /proc/uptime); timeout 60 env -i PATH=/usr/bin:/bin HOME=$H "$@" </dev/null 2>&1 | sed 's/^/#   /'; echo "#   rc=$? t=$(echo "$t0 $(cut -d' ' -f1 /proc/uptime)" | awk '{print $2-$1}')"; }
x confine probe
x confine -w $WS -- /opt/tests/probe status
x confine -w $WS -- /opt/tests/probe read $H/secret.txt
x confine -w $WS -- /opt/tests/probe write /usr/x
x confine -w $WS -- /opt/tests/probe write $WS/x
x confine -w $WS -- sh -c 'exit 42'
x confine -w $WS -- nosuchcmd
x confine -w /tmp -- /opt/tests/probe write /tmp/y
x confine -w $WS --no-namespaces -- true
x confine -w $WS --no-namespaces --best-effort -- /opt/tests/probe status
x confine -w $WS --no-namespaces --best-effort -- /opt/tests/probe write $H/x
x confine -w $WS --no-namespaces --best-effort -- /opt/tests/probe write $WS/z
x confine -w $WS --no-namespaces --best-effort -- /opt/tests/probe read $H/secret.txt
x confine -w $WS --no-namespaces --best-effort -- /opt/tests/probe tiocsti a
x confine -w $WS --no-namespaces --best-effort -- unshare -U true
x confine -w $WS --no-namespaces --best-effort -- sh -c 'exit 42'
x confine -w $WS --no-namespaces --best-effort -- nosuchcmd
x confine -w $WS --best-effort -- true
echo "# checks done: $V/$P"
