#!/bin/bash
# seccomp-oci-json: --seccomp FILE.json (and `confine run --security-opt seccomp=FILE.json`) reads a Docker/OCI
# seccomp profile: its errno, kill and argument rules are enforced and replace the built-in policy; moby's own
# default profile loads and keeps its denials; unsupported actions and malformed JSON are one-line errors.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

MOBY=$TESTS_DIR/../fixtures/docker-default-seccomp.json

scenario() {
    cat >"$V/profile.json" <<'JSON'
{
  "defaultAction": "SCMP_ACT_ALLOW",
  "syscalls": [
    {"names": ["getcwd"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13},
    {"names": ["personality"], "action": "SCMP_ACT_ERRNO", "errnoRet": 22,
     "args": [{"index": 0, "value": 4294967295, "op": "SCMP_CMP_EQ"}]},
    {"names": ["kexec_load"], "action": "SCMP_ACT_KILL_PROCESS"}
  ]
}
JSON
    set_mode full --seccomp "$V/profile.json"
    probe syscalls getcwd bpf personality getpid
    expect_eq "$RC" 0 "--seccomp profile.json: probe exit ($(last))"
    # bpf: the policy allows it, confine's floor still refuses it (a policy cannot remove the floor).
    expect_eq "$OUT" $'getcwd=EACCES\nbpf=EPERM\npersonality=EINVAL\ngetpid=OK' "errnoRet, argument rule, default allow"
    probe personality 0 /bin/true
    expect_eq "$RC" 0 "personality(0) does not match the argument rule ($(last))"
    probe syscalls kexec_load
    expect_eq "$OUT" kexec_load=SIGSYS "SCMP_ACT_KILL_PROCESS: the caller is killed by SIGSYS ($(last))"

    # moby's default profile, as Docker users have it: no capabilities here, so its CAP_SYS_ADMIN rules never apply.
    set_mode full --seccomp "$MOBY"
    probe syscalls getcwd socket personality bpf unshare kexec_load clone3
    expect_eq "$OUT" $'getcwd=OK\nsocket=OK\npersonality=OK\nbpf=EPERM\nunshare=EPERM\nkexec_load=EPERM\nclone3=ENOSYS' \
        "moby's default profile ($(last))"

    # The same through confine run's docker flag, on the host image.
    try sb run --security-opt "seccomp=$V/profile.json" -v "$WS:$WS" -w "$WS" host "$PIN" syscalls getcwd getpid
    expect_eq "$OUT" $'getcwd=EACCES\ngetpid=OK' "confine run --security-opt seccomp=profile.json ($(last))"

    # Refused, never reinterpreted.
    printf '{"defaultAction": "SCMP_ACT_LOG"}\n' >"$V/log.json"
    OPTS=(--seccomp "$V/log.json")
    sandbox /bin/true
    expect_eq "$RC" 125 "SCMP_ACT_LOG refused ($(last))"
    expect_match "$ERRS" 'log.json: defaultAction: action `SCMP_ACT_LOG` is not supported' "the error names the action"
    printf '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": "getcwd"' >"$V/broken.json"
    OPTS=(--seccomp "$V/broken.json")
    sandbox /bin/true
    expect_eq "$RC" 125 "malformed JSON refused ($(last))"
    expect_match "$ERRS" 'broken.json: invalid JSON' "the error says the JSON is invalid"
    expect_eq "$(grep -c . <<<"$ERRS")" 1 "one line ($(last))"
}

run_variants scenario
