#!/bin/bash
# seccomp-custom-errors: a --seccomp policy with an unknown syscall name, or with a TOML syntax error, is
# refused before anything runs: exit 125 and one line on stderr naming the file and the syscall (or the line).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

# expect_policy_error WHAT REGEX: the last `sandbox` run failed with 125, one line matching REGEX, nothing run.
expect_policy_error() {
    expect_eq "$RC" 125 "$1: exit status ($(last))"
    expect_match "$ERRS" '^confine: [^'$'\n'']+$' "$1: stderr must be one line 'confine: ...'"
    expect_match "$ERRS" "$2" "$1: stderr"
    expect_eq "$OUT" "" "$1: stdout"
    [[ ! -e $WS/ran ]] || fail "$1: the command ran"
}

scenario() {
    local unknown=$V/unknown-syscall.toml syntax=$V/syntax-error.toml mode
    cat >"$unknown" <<'POLICY'
format = "confine-seccomp/1"
default = "allow"

[[rule]]
group = "typo"
why = "a syscall name that does not exist"
action = "errno:EPERM"
syscalls = [
  "getcwd",
  "no_such_syscall_xyz",
]
POLICY
    # Line 6: a string that is never closed.
    cat >"$syntax" <<'POLICY'
format = "confine-seccomp/1"
default = "allow"

[[rule]]
group = "broken"
why = "this string is not closed
action = "errno:EPERM"
syscalls = ["getcwd"]
POLICY
    for mode in full fallback; do
        set_mode "$mode" --seccomp "$unknown"
        sandbox /bin/touch "$WS/ran"
        expect_policy_error "[$mode] unknown syscall" "$unknown"
        expect_match "$ERRS" "no_such_syscall_xyz" "[$mode] unknown syscall: the name"

        set_mode "$mode" --seccomp "$syntax"
        sandbox /bin/touch "$WS/ran"
        expect_policy_error "[$mode] syntax error" "$syntax:6([^0-9]|\$)"
    done
}
run_variants scenario
