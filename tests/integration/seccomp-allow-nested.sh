#!/bin/bash
# seccomp-allow-nested: with --allow-nested the new-namespaces, join-namespaces and mounts rules are dropped:
# unshare (CLONE_NEWUSER), clone(CLONE_NEWUSER), setns and mount reach the kernel, in full and in fallback mode,
# while the other rules (keyring) still hold. escape-nested-sandbox checks that confine's own mounts hold in the
# namespaces a nested sandbox makes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
unshare:CLONE_NEWUSER                   OK
unshare:CLONE_NEWUSER|CLONE_NEWNS       OK       # a mount namespace inside the new user namespace
clone:CLONE_NEWUSER|SIGCHLD             OK
unshare:CLONE_NEWPID|1                  EINVAL -  # the kernel answers (not seccomp EPERM)
setns:-1,0                              EBADF -
mount                                   EFAULT - # the kernel answers (its bad pointer), not seccomp
keyctl                                  EPERM
'
# Prints "nested" when unshare(1) ran its command in a user namespace other than the sandbox's.
NESTED='outer=$(readlink /proc/self/ns/user) && inner=$(unshare --user readlink /proc/self/ns/user) && [ "$outer" != "$inner" ] && echo nested'

scenario() {
    set_mode full --allow-nested
    check_syscall_table "$TABLE"
    # util-linux unshare(1) creates a user namespace (no id map: mapping uid 0, as the root variant's inside
    # uid is, would need CAP_SETFCAP, which the sandbox rightly does not have).
    sandbox /bin/sh -c "$NESTED"
    expect_eq "$RC:$OUT" "0:nested" "[full] unshare --user inside with --allow-nested ($(last))"
    set_mode fallback --allow-nested
    check_syscall_table "$TABLE"
    sandbox /bin/sh -c "$NESTED"
    expect_eq "$RC:$OUT" "0:nested" "[fallback] unshare --user inside with --allow-nested ($(last))"
    # Without --allow-nested the same command is refused (the control).
    set_mode full
    sandbox /bin/sh -c "$NESTED"
    [[ $RC != 0 && $OUT != nested ]] || fail "[full] unshare --user without --allow-nested: expected a refusal, got $(last)"
}
run_variants scenario
