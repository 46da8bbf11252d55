#!/bin/bash
# escape-file-caps: the sandbox cannot leave a file capability (security.capability) in the workspace, which would
# hand the capability to whoever runs the file on the host. setxattr, lsetxattr and fsetxattr are tried from
# inside, in full mode (as root: through the idmapped workspace) and in fallback mode; each file is judged on the
# host after the run with a raw getxattr. The layer is the dropped capabilities (no CAP_SETFCAP, bounding set
# empty); as root, a host control proves the value written is one the kernel accepts. With --allow-nested, where a
# nested user namespace would hold CAP_SETFCAP, seccomp refuses xattr writes, and in full mode the check after the
# run drops a capability that got past it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

VIAS=(setxattr lsetxattr fsetxattr)

scenario() {
    local mode via
    if [[ $VARIANT == root ]]; then
        # Control: the same value, written by real root on the host, is accepted and reads back.
        cp "$PROBE" "$T/cap-control"
        host_probe set-filecap setxattr "$T/cap-control"
        expect_eq "$OUT" OK "host control: root sets the file capability ($(last))"
        host_probe getxattr "$T/cap-control" security.capability
        expect_eq "$OUT" "OK 20" "host control: the capability reads back ($(last))"
        rm -f "$T/cap-control"
    fi
    for mode in full fallback; do
        set_mode "$mode"
        for via in "${VIAS[@]}"; do
            local f=$WS/cap-$mode-$via
            cp "$PROBE" "$f"
            chown "$VUID:$VGID" "$f"
            sandbox /bin/sh -c '"$1" set-filecap "$2" "$3"; "$1" getxattr "$3" security.capability' sh "$PIN" "$via" "$f"
            expect_eq "$OUT" $'EPERM\nENODATA' "[$mode] $via inside ($(last))"
            host_probe getxattr "$f" security.capability
            expect_eq "$OUT" ENODATA "[$mode] $via: security.capability on the host after the run ($(last))"
            expect_eq "$(getcap "$f")" "" "[$mode] $via: getcap on the host"
        done
    done
}

# With --allow-nested the command may create a user namespace, where it holds CAP_SETFCAP over files owned by its
# own uid: there the kernel would store a security.capability (version 3, for that namespace's root) that stays
# on the host. This script does it from inside: unshare, map the uid, setxattr.
NESTED_PLANT='
import ctypes, os, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
uid, gid = os.getuid(), os.getgid()  # before unshare: in the new namespace they read as unmapped
if libc.unshare(0x10000000) != 0:
    sys.exit("unshare: " + os.strerror(ctypes.get_errno()))
for name, text in (("setgroups", "deny"), ("uid_map", "0 %d 1" % uid), ("gid_map", "0 %d 1" % gid)):
    fd = os.open("/proc/self/" + name, os.O_WRONLY)
    os.write(fd, text.encode())
    os.close(fd)
value = struct.pack("<5I", 0x02000001, 1 << 13, 0, 0, 0)
try:
    os.setxattr(sys.argv[1], "security.capability", value)
    print("OK")
except OSError as e:
    print(os.strerror(e.errno))
if len(sys.argv) > 2:  # say it is planted, then wait for the host to look (until the file argv[2] exists)
    open(sys.argv[1] + ".planted", "w").close()
    while not os.path.exists(sys.argv[2]):
        time.sleep(0.05)
'

nested_scenario() {
    local f=$WS/cap-nested
    cp "$PROBE" "$f"
    chown "$VUID:$VGID" "$f"
    OPTS=(--allow-nested)
    sandbox /usr/bin/python3 -c "$NESTED_PLANT" "$f"
    # As root, writing the nested namespace's uid map already fails (EPERM), so the plant stops before setxattr;
    # rootless, seccomp is what refuses it (the controls below show the plant landing without it).
    if [[ $VARIANT == user ]]; then
        expect_eq "$OUT" "Operation not permitted" "a file capability set in a nested user namespace ($(last))"
    fi
    host_probe getxattr "$f" security.capability
    expect_eq "$OUT" ENODATA "security.capability on the host after the nested plant ($(last))"
    if [[ $VARIANT == user ]]; then
        # Without the seccomp layer the nested plant succeeds inside; the check after the run (full mode) drops
        # what it left, as it drops what a mount inside copies (escape-nested-copyup).
        XENV+=(CONFINE_TEST_FEATURES=seccomp=0)
        OPTS+=(--best-effort -q)
        sandbox /usr/bin/python3 -c "$NESTED_PLANT" "$f"
        expect_eq "$OUT" OK "without seccomp: the nested plant ($(last))"
        host_probe getxattr "$f" security.capability
        expect_eq "$OUT" ENODATA "without seccomp: security.capability on the host after the check ($(last))"
        # Control: while the run lasts, before that check, the plant is on the host, so the checks above can fail.
        sb_bg -w "$WS" "${OPTS[@]}" -- /usr/bin/python3 -c "$NESTED_PLANT" "$f" "$WS/go-on" >/dev/null 2>&1
        wait_file "$f.planted" || fail "control: the nested plant did not happen"
        host_probe getxattr "$f" security.capability
        expect_match "$OUT" "^OK" "control without seccomp: security.capability on the host during the run ($(last))"
        touch "$WS/go-on"
        wait "$BG_PID"
    fi
}

both() {
    scenario
    nested_scenario
}
run_variants both
