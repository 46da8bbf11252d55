#!/bin/bash
# fallback-docker-seccomp: confine where CI jobs and Kubernetes pods run it: inside a container with Docker's
# default seccomp profile (tests/fixtures/docker-default-seccomp.json, installed as a container runtime does,
# by confine-test-seccomp-exec), as an unprivileged user without CAP_SYS_ADMIN, so with no user namespaces.
# Without --best-effort confine refuses (exit 125) with a line that names the layer, why and how to fix it, and
# runs nothing. With --best-effort it runs the fallback sandbox and keeps every promise fallback mode lists as
# kept, attacked from inside and judged on the host: writes outside the workspace fail (Landlock), the home is
# unreadable, TCP to the host and its abstract sockets are refused, host processes cannot be signalled, no
# capabilities, no_new_privs, confine's own seccomp filter stacked on Docker's, credentials scrubbed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"
fallback_base

: "${SECCOMP_EXEC:=$TESTS_DIR/../../build/tests/integration/confine-test-seccomp-exec}"
[[ -x $SECCOMP_EXEC ]] || fail "confine-test-seccomp-exec not found at SECCOMP_EXEC=$SECCOMP_EXEC (build it: ninja -C build)"
# World-readable copies for uid 65534 (the checkout may be unreadable to it).
cp "$SECCOMP_EXEC" "$BIN/confine-test-seccomp-exec"
cp "$TESTS_DIR/../fixtures/docker-default-seccomp.json" "$T/docker-default-seccomp.json"
chmod 0755 "$BIN/confine-test-seccomp-exec"
chmod 0644 "$T/docker-default-seccomp.json"

# in_container CMD...: CMD on the host as the variant's user, under Docker's default seccomp profile.
in_container() {
    try timeout -k 5 "$SB_TIMEOUT" "${RUN_AS[@]}" env -i "${BASE_ENV[@]}" "${XENV[@]}" \
        "$BIN/confine-test-seccomp-exec" "$T/docker-default-seccomp.json" "$@"
}
# confine_in_container CONFINE-ARGS...: confine with this workspace, in that container.
confine_in_container() { in_container "$CONF" -w "$WS" "$@"; }

nl=$'\n'
# seccomp_filters STATUS-TEXT: the number of seccomp filters in a /proc/PID/status text.
seccomp_filters() { sed -n 's/^Seccomp_filters:[[:space:]]*//p' <<<"$1"; }

# inside VERB ARGS...: the probe in the fallback sandbox, in that container.
inside() { confine_in_container --best-effort -q -- "$PIN" "$@"; }
# attack WHAT ERRNO VERB ARGS...: the probe's VERB inside must fail with exactly ERRNO.
attack() {
    local what=$1 want=$2
    shift 2
    inside "$@"
    expect_eq "$RC:$OUT" "1:$want" "inside: $what ($(last))"
}

# outside_state: what the sandbox must not change on the host, fingerprinted.
outside_state() {
    ls -A "$FB_DIR"
    tree_sum "$FB_DIR/side"
    tree_sum "$H"
}

scenario() {
    fallback_layout
    local side=$FB_DIR/side abstract=confine-it-docker-$RANDOM$RANDOM before accepted host_filters pid i
    mkdir -m 0755 "$side"
    echo original >"$side/victim"
    chown -R "$VUID:$VGID" "$side"
    start_servers --tcp 127.0.0.1 --abstract "$abstract" --accept-log "$V/accepted"
    host_bg sleep 60
    pid=$BG_PID

    # Controls: the container is what CI runners and pods give (namespaces refused; TIOCLINUX, io_uring and file
    # handles left to the kernel; one filter: Docker's), and in it the variant's user may do all that the sandbox
    # must not.
    in_container "$PROBE_BIN" syscalls unshare clone ioctl io_uring_setup name_to_handle_at
    expect_eq "$OUT" $'unshare=EPERM\nclone=EPERM\nioctl=EBADF\nio_uring_setup=EFAULT\nname_to_handle_at=EFAULT' \
        "control: Docker's profile refuses new namespaces, lets the kernel answer the others ($(last))"
    in_container "$PROBE_BIN" status
    host_filters=$(seccomp_filters "$OUT")
    expect_eq "$host_filters" 1 "control: seccomp filters in the container ($(last))"
    in_container "$PROBE_BIN" write "$side/host-control"
    expect_eq "$OUT" OK "control: the user writes next to the workspace ($(last))"
    rm -f "$side/host-control"
    in_container "$PROBE_BIN" read "$H/.ssh/id_rsa"
    expect_match "$OUT" "^OK .*$SSH_CANARY" "control: the user reads its key ($(last))"
    in_container "$PROBE_BIN" connect-tcp 127.0.0.1 "$TCP_0_PORT"
    expect_eq "$OUT" OK "control: TCP to the host ($(last))"
    in_container "$PROBE_BIN" connect-abstract "$abstract"
    expect_eq "$OUT" OK "control: the host's abstract socket ($(last))"
    in_container "$PROBE_BIN" kill "$pid" 0
    expect_eq "$OUT" OK "control: signal a host process of the same user ($(last))"
    # The server logs each accepted connection (TCP and abstract): wait for the controls' two.
    for ((i = 0; i < 100; i++)); do
        [[ $(wc -l <"$V/accepted" 2>/dev/null) == 2 ]] && break
        sleep 0.05
    done
    expect_eq "$(wc -l <"$V/accepted")" 2 "control: the host servers logged the controls' connections"
    accepted=$(<"$V/accepted")
    before=$(outside_state)

    # Fail closed: refused before anything runs, with the layer, the cause and the fix.
    confine_in_container -- "$PIN" write "$WS/ran" yes
    expect_eq "$RC" 125 "without --best-effort: exit status ($(last))"
    [[ ! -e $WS/ran ]] || fail "without --best-effort the command ran"
    # One line: the layer, why (the container's seccomp filter), the fix.
    expect_match "$ERRS" "user namespaces are unavailable[^$nl]*: a seccomp filter on this process[^$nl]* refuses new namespaces \\(fix: [^$nl]*--best-effort" \
        "the refusal names the layer, the cause and the fix"
    expect_match "$ERRS" "secret files in the workspace read as empty: needs a mount namespace" \
        "the refusal lists what fallback mode would lose"

    # --best-effort: the fallback sandbox runs the command and says what it does not keep.
    XENV=(GITHUB_TOKEN=CANARY-token-$RANDOM)
    confine_in_container --best-effort -- "$PIN" write "$WS/ran" yes
    expect_eq "$RC:$OUT" 0:OK "--best-effort: the command runs ($(last))"
    expect_eq "$(<"$WS/ran")" yes "--best-effort: the write in the workspace, seen on the host"
    expect_match "$ERRS" "(^|$nl)confine: warning: user namespaces are unavailable, so only fallback mode is possible: a seccomp filter" \
        "--best-effort: a warning says fallback mode runs, and why"
    expect_match "$ERRS" "(^|$nl)confine: warning: not enforced \\(--best-effort\\): secret files in the workspace" \
        "--best-effort: a warning lists each promise lost"

    # Every promise fallback mode keeps, attacked from inside.
    attack "a write outside the workspace (Landlock)" EACCES write "$side/new-file" x
    attack "an overwrite outside the workspace (Landlock)" EACCES write "$side/victim" overwritten
    attack "a delete outside the workspace (Landlock)" EACCES unlink "$side/victim"
    attack "a write next to the workspace (Landlock)" EACCES write "$FB_DIR/in-the-parent" x
    attack "the home's key (Landlock)" EACCES read "$H/.ssh/id_rsa"
    attack "TCP to the host (Landlock)" EACCES connect-tcp 127.0.0.1 "$TCP_0_PORT"
    attack "the host's abstract socket (Landlock scope)" EPERM connect-abstract "$abstract"
    attack "a signal to a host process (Landlock scope)" EPERM kill "$pid" TERM
    inside syscalls ioctl io_uring_setup name_to_handle_at
    expect_eq "$OUT" $'ioctl=EPERM\nio_uring_setup=ENOSYS\nname_to_handle_at=EPERM' \
        "inside: what Docker allows, confine's seccomp refuses ($(last))"
    inside status
    expect_match "$OUT" $'(^|\n)NoNewPrivs:[[:space:]]*1(\n|$)' "inside: no_new_privs ($(last))"
    # No capability held, none to gain (no_new_privs: setuid and file capabilities grant nothing at exec; an
    # unprivileged user cannot empty the bounding set, which only bounds such gains).
    local set
    for set in CapInh CapPrm CapEff CapAmb; do
        expect_match "$OUT" $'(^|\n)'"$set:"$'[[:space:]]*0+(\n|$)' "inside: $set empty"
    done
    expect_match "$OUT" $'(^|\n)Seccomp:[[:space:]]*2(\n|$)' "inside: seccomp filter mode"
    (($(seccomp_filters "$OUT") > host_filters)) || fail "inside: confine's seccomp filter is not stacked on Docker's ($(last))"
    confine_in_container --best-effort -q -- /usr/bin/env
    expect_eq "$RC" 0 "env inside ($(last))"
    expect_no_match "$OUT" "GITHUB_TOKEN|CANARY-token" "inside: the credential variable is scrubbed"

    # Judged on the host, after the runs.
    expect_eq "$(outside_state)" "$before" "the host outside the workspace after the attacks"
    expect_eq "$(<"$side/victim")" original "the file outside the workspace"
    kill -0 "$pid" 2>/dev/null || fail "the host process died when the sandbox signalled it"
    expect_eq "$(<"$V/accepted")" "$accepted" "connections the host servers accepted (the controls' only)"
}
run_variants scenario user
