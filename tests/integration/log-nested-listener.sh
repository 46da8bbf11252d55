#!/bin/bash
# log-nested-listener: confine records refused syscalls through a seccomp listener, and the kernel allows one
# listener per chain of filters. The decision, tested here: with --allow-nested confine installs no listener, so a
# nested sandbox inside can have its own (a seccomp filter with SECCOMP_FILTER_FLAG_NEW_LISTENER succeeds, and real
# bwrap runs), and refused calls are then not recorded (still refused); without --allow-nested confine holds the
# listener, the same inner filter gets EBUSY, and confine records the refusals. A --seccomp policy that refuses
# sendmsg (the listener's way to confine) runs normally, without hanging, its refusals unrecorded.
. "$(dirname "$0")/lib.sh"

command -v bwrap >/dev/null || skip "bubblewrap is not installed (apt-get install bubblewrap)"

NESTED_UID=1000  # the root variant's workspace owner: bwrap cannot map uid 0 inside (escape-nested-sandbox)

# log_lines FILE: each line's layer, syscall and errno (the file must hold only whole JSON lines).
log_lines() {
    /usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    print(r["layer"], r.get("syscall"), r.get("errno"))' "$1"
}

scenario() {
    if [[ $VARIANT == root ]]; then chown -R "$NESTED_UID:$NESTED_UID" "$WS"; fi
    local logdir=$V/logs log
    mkdir -m 0755 "$logdir"
    if [[ $SUITE_UID == 0 ]]; then chown "$VUID:$VGID" "$logdir"; fi

    # --allow-nested: the command's own listener, a nested bwrap; keyctl still refused (keyring), not recorded.
    log=$logdir/nested.jsonl
    OPTS=(--allow-nested --log "$log")
    probe seccomp-listener
    expect_match "$RC:$OUT" '^0:OK fd=[0-9]+$' "--allow-nested: a listener of the command's own ($(last))"
    sandbox bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent --bind "$WS" "$WS" -- \
        "$PIN" syscall keyctl
    expect_eq "$RC:$OUT" "1:EPERM" "--allow-nested: bwrap runs, keyctl inside it is refused ($(last))"
    expect_errno EPERM syscall keyctl
    expect_eq "$(log_lines "$log")" "" "--allow-nested: refusals are not recorded"

    # Without it: confine holds the listener; the command's gets EBUSY, and its refusals are recorded.
    log=$logdir/default.jsonl
    OPTS=(--log "$log")
    probe seccomp-listener
    expect_eq "$RC:$OUT" "1:EBUSY" "without --allow-nested: the inner listener ($(last))"
    expect_errno EPERM syscall keyctl
    expect_eq "$(log_lines "$log")" "seccomp keyctl EPERM" "without --allow-nested: the refusal is recorded"

    # A policy that refuses sendmsg: the run ends (no wait on an answer that cannot come), its refusals unrecorded.
    cat >"$V/no-sendmsg.toml" <<'EOF'
format = "confine-seccomp/1"
default = "allow"

[[rule]]
group = "test-no-sendmsg"
why = "the integration test refuses sendmsg and getcwd"
action = "errno:EPERM"
syscalls = [
  "getcwd",
  "sendmsg",
]
EOF
    log=$logdir/custom.jsonl
    OPTS=(--log "$log" --seccomp "$V/no-sendmsg.toml")
    local start=$SECONDS
    probe syscalls getcwd getpid
    expect_eq "$RC:$OUT" $'0:getcwd=EPERM\ngetpid=OK' "--seccomp refusing sendmsg: the run ($(last))"
    ((SECONDS - start < 20)) || fail "--seccomp refusing sendmsg: the run took $((SECONDS - start)) s"
    expect_eq "$(log_lines "$log")" "" "--seccomp refusing sendmsg: refusals are not recorded"
}
run_variants scenario
