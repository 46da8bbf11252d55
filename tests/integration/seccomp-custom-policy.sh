#!/bin/bash
# seccomp-custom-policy: --seccomp FILE (format confine-seccomp/1) replaces the built-in policy: its errno and
# kill actions are enforced, and the built-in rules no longer apply, except confine's floor (bpf stays refused;
# seccomp-floor tests the rest of it).
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
        # Control: getcwd works under the built-in policy, which refuses bpf and disabling ASLR.
        set_mode "$mode"
        probe syscalls getcwd bpf personality:0x40000
        expect_eq "$OUT" $'getcwd=OK\nbpf=EPERM\npersonality:0x40000=EPERM' "[$mode] built-in policy ($(last))"

        set_mode "$mode" --seccomp "$V/eacces.toml"
        probe syscalls getcwd bpf personality:0x40000 getpid
        expect_eq "$RC" 0 "[$mode] --seccomp eacces.toml: probe exit ($(last))"
        # personality: the built-in rule is gone, the kernel answers; bpf: still refused by the floor.
        expect_eq "$OUT" $'getcwd=EACCES\nbpf=EPERM\npersonality:0x40000=OK\ngetpid=OK' "[$mode] --seccomp eacces.toml"
        expect_errno EACCES syscall getcwd

        set_mode "$mode" --seccomp "$V/kill.toml"
        probe syscall getcwd
        expect_eq "$RC" 159 "[$mode] --seccomp kill.toml: getcwd kills the probe with SIGSYS ($(last))"
        probe syscall getpid
        expect_eq "$RC" 0 "[$mode] --seccomp kill.toml: getpid ($(last))"
    done
}
run_variants scenario
