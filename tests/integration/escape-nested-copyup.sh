#!/bin/bash
# escape-nested-copyup: with --allow-nested, the command may mount an overlayfs in a user namespace of its own, with
# its upper directory in the workspace. Copying a file up is the kernel's work, past seccomp: the copy keeps the
# lower file's setuid and setgid bits and its file capability (security.capability), which no syscall of the
# command may set. The lower files are the workspace owner's, given those on the host beforehand (the sandbox can
# make neither). From inside: unshare, mount the overlay, touch each file (a copy-up), and show the copies carry
# both; the control reads them on the host while the run lasts, where they would stay. After the run, confine has
# dropped both from the copies (as chown does) and named them, and left the lower files alone: judged on the host
# with a raw getxattr and stat.
. "$(dirname "$0")/lib.sh"

command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
[[ $SUITE_UID == 0 ]] || skip "only root can give the lower file a file capability"

NESTED_UID=1000  # the root variant's workspace owner: a command that is root inside cannot nest (escape-nested-sandbox)

# The capability a user namespace of OWNER's own stores (version 3, root id OWNER, cap_net_raw): what a plain setcap
# writes (version 2, root id 0) cannot be read through the idmapped workspace of a root-run sandbox, where the
# copy-up then fails by itself (EOVERFLOW).
GIVE_CAP='
import os, struct, sys
os.setxattr(sys.argv[1], "security.capability", struct.pack("<6I", 0x03000001, 1 << 13, 0, 0, 0, int(sys.argv[2])))
'

# Inside, as root of a user and mount namespace of the command's own. It waits for the host to look (go-on).
COPY_UP='
cd "$1"
mount -t overlay overlay -o lowerdir=lower,upperdir=upper,workdir=work merged || exit 1
touch merged/capfile merged/suidfile
"$2" getxattr upper/capfile security.capability
stat -c %A upper/suidfile
: >copied
while [ ! -e go-on ]; do sleep 0.05; done
'

scenario() {
    local owner=$VUID said
    if [[ $VARIANT == root ]]; then owner=$NESTED_UID; fi
    mkdir "$WS/lower" "$WS/upper" "$WS/work" "$WS/merged"
    cp "$PROBE" "$WS/lower/capfile"
    cp "$PROBE" "$WS/lower/suidfile"
    chown -R "$owner:$owner" "$WS"
    # After the chown, which drops both.
    /usr/bin/python3 -c "$GIVE_CAP" "$WS/lower/capfile" "$owner"
    chmod 6755 "$WS/lower/suidfile"
    # The check after the run judges what changed since the run began by the kernel's file clock, which ticks every
    # few milliseconds: a file changed in the run's first tick counts as the run's. The setup is older than that.
    sleep 0.05

    OPTS=(--allow-nested)
    sb_bg -w "$WS" "${OPTS[@]}" -- unshare --user --map-root-user --mount /bin/sh -c "$COPY_UP" sh "$WS" "$PIN" \
        >"$V/out" 2>"$V/err"
    wait_file "$WS/copied" || fail "the copy-up did not happen: $(cat "$V/out" "$V/err")"
    # The control: the copies carry what the lower files do, on the host, while the run lasts.
    host_probe getxattr "$WS/upper/capfile" security.capability
    expect_eq "$OUT" "OK 24" "control: the copy's file capability on the host during the run ($(last))"
    expect_eq "$(stat -c %a "$WS/upper/suidfile")" 6755 "control: the copy's mode on the host during the run"
    touch "$WS/go-on"
    wait "$BG_PID" && RC=0 || RC=$?
    OUT=$(<"$V/out") ERRS=$(<"$V/err")
    expect_eq "$RC" 0 "the nested copy-up ran ($(last))"
    expect_eq "$OUT" $'OK 20\n-rwsr-sr-x' "inside, the copies right after the copy-up ($(last))"
    said=$ERRS

    # On the host, after the run.
    host_probe getxattr "$WS/upper/capfile" security.capability
    expect_eq "$OUT" ENODATA "the copy's file capability after the run ($(last))"
    expect_eq "$(stat -c %a "$WS/upper/suidfile")" 755 "the copy's mode after the run"
    expect_match "$said" "dropped .* $WS/upper/capfile" "confine names the copy it dropped the file capability of"
    expect_match "$said" "dropped .* $WS/upper/suidfile" "confine names the copy it dropped the setuid bits of"
    # What the run did not write keeps what it had.
    host_probe getxattr "$WS/lower/capfile" security.capability
    expect_eq "$OUT" "OK 24" "the lower file's capability after the run ($(last))"
    expect_eq "$(stat -c %a "$WS/lower/suidfile")" 6755 "the lower file's mode after the run"
}
run_variants scenario
