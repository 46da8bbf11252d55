#!/bin/bash
# seccomp-custom-policy: --seccomp FILE (format confine-seccomp/1) replaces the built-in policy: its errno and
# kill actions are enforced, and the built-in rules no longer apply.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

# write_policy FILE ACTION: a policy denying getcwd with ACTION.
write_policy() {
    cat >"$1" <<POLICY
format = "confine-seccomp/1"
default = "allow"

[[rule]]
group = "test-getcwd"
why = "the integration test denies getcwd"
action = "$2"
syscalls = [
  "getcwd",
]
POLICY
}

scenario() {
    local mode
    write_policy "$V/eacces.toml" errno:EACCES
    write_policy "$V/kill.toml" kill
    for mode in full fallback; do
        # Control: getcwd works under the built-in policy, which refuses bpf.
        set_mode "$mode"
        probe syscalls getcwd bpf
        expect_eq "$OUT" $'getcwd=OK\nbpf=EPERM' "[$mode] built-in policy ($(last))"

        set_mode "$mode" --seccomp "$V/eacces.toml"
        probe syscalls getcwd bpf getpid
        expect_eq "$RC" 0 "[$mode] --seccomp eacces.toml: probe exit ($(last))"
        # bpf: the built-in kernel-attack-surface rule is gone, the kernel answers (EFAULT: bad attr pointer).
        expect_eq "$OUT" $'getcwd=EACCES\nbpf=EFAULT\ngetpid=OK' "[$mode] --seccomp eacces.toml"
        expect_errno EACCES syscall getcwd

        set_mode "$mode" --seccomp "$V/kill.toml"
        probe syscall getcwd
        expect_eq "$RC" 159 "[$mode] --seccomp kill.toml: getcwd kills the probe with SIGSYS ($(last))"
        probe syscall getpid
        expect_eq "$RC" 0 "[$mode] --seccomp kill.toml: getpid ($(last))"
    done
}
run_variants scenario
