#!/bin/bash
# devices: --device SRC[:DEST[:PERMS]] gives the sandbox one host device node (here one a test makes: mknod c 1 3,
# the kernel's null device) at DEST, usable as PERMS say and nothing beside it; a CDI device (--device
# VENDOR/CLASS=NAME) brings its spec's nodes, read-only binds and variables; a spec the sandbox could have written
# is never read (the attack: a run plants one that a later run would trust); what is not a device, a missing one
# and --gpus without NVIDIA's spec are one line each, exit 125. Judged from inside (what a write and a read got)
# and on the host (the bind's data left as it was).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

[[ $SUITE_UID == 0 ]] || skip "only root can make the device node the test gives"

DEV=$T/given-null

# Writes and reads NODE inside, saying what each got.
USE='
printf x 2>/dev/null >"$1" && echo write=ok || echo write=refused
cat "$1" >/dev/null 2>&1 && echo read=ok || echo read=refused
'

cdi_spec() {
    local dir=$1
    mkdir -m 0755 -p "$dir" "$T/cdi-data"
    echo data >"$T/cdi-data/lib"
    cat >"$dir/test.json" <<EOF
{"cdiVersion": "0.6.0", "kind": "test.example/null",
 "devices": [{"name": "one", "containerEdits": {"deviceNodes": [{"path": "/dev/cdi-null", "hostPath": "$DEV"}],
                                               "env": ["FROM_CDI=one"]}}],
 "containerEdits": {"mounts": [{"hostPath": "$T/cdi-data", "containerPath": "/cdi-data", "options": ["ro"]}],
                    "hooks": [{"hookName": "createContainer", "path": "/bin/true"}]}}
EOF
}

scenario() {
    [[ -c $DEV ]] || mknod -m 0666 "$DEV" c 1 3

    # The control: without --device the node is nowhere inside.
    set_mode full
    sandbox /bin/sh -c "ls /dev/given 2>&1; ls /dev"
    expect_match "$OUT" "No such file" "without --device, no such node ($(last))"

    set_mode full --device "$DEV:/dev/given"
    sandbox /bin/sh -c "$USE" sh /dev/given
    expect_eq "$OUT" $'write=ok\nread=ok' "rw: the node is usable inside ($(last))"
    set_mode full --device "$DEV:/dev/given:r"
    sandbox /bin/sh -c "$USE" sh /dev/given
    expect_eq "$OUT" $'write=refused\nread=ok' "r: a write is refused, a read is not ($(last))"
    set_mode full --device "$DEV:/dev/given:rwm"
    sandbox /bin/sh -c "$USE" sh /dev/given
    expect_eq "$OUT" $'write=ok\nread=ok' "rwm: usable ($(last))"
    expect_match "$ERRS" "m \(mknod\) grants nothing" "rwm: m is said to grant nothing"

    # Fallback mode: the host's node itself, reachable only because Landlock grants it (the control: not without).
    set_mode fallback
    sandbox /bin/sh -c "$USE" sh "$DEV"
    expect_eq "$OUT" $'write=refused\nread=refused' "fallback, control: the node outside the workspace is refused ($(last))"
    set_mode fallback --device "$DEV"
    sandbox /bin/sh -c "$USE" sh "$DEV"
    expect_eq "$OUT" $'write=ok\nread=ok' "fallback: the node given ($(last))"
    set_mode fallback --device "$DEV:/dev/elsewhere"
    sandbox /bin/true
    expect_eq "$RC" 125 "fallback: a device at another path needs a mount namespace ($(last))"

    # A CDI device: its node, its variable, its bind read-only; its hook is said not to run.
    cdi_spec "$T/cdi"
    XENV=(CONFINE_CDI_SPEC_DIRS="$T/cdi")
    set_mode full --device test.example/null=one
    sandbox /bin/sh -c "$USE"'echo "env=$FROM_CDI"; cat /cdi-data/lib; echo changed >/cdi-data/lib 2>/dev/null && echo bind=written' \
        sh /dev/cdi-null
    expect_eq "$OUT" $'write=ok\nread=ok\nenv=one\ndata' "a CDI device ($(last))"
    expect_eq "$(cat "$T/cdi-data/lib")" data "the spec's bind on the host, after the run"
    expect_match "$ERRS" "the CDI specs name 1 hook .* confine runs none" "the hook is said not to run"
    try sb explain -w "$WS" --device test.example/null=one -- true
    expect_match "$OUT" "device +$DEV at /dev/cdi-null \(rw; test.example/null=one\)" "explain lists the device"

    # The attack: a spec the sandbox can write (the workspace) is never read, so a run cannot plant the next one's.
    cdi_spec "$WS/cdi"
    chown -R "$VUID:$VGID" "$WS/cdi"
    XENV=(CONFINE_CDI_SPEC_DIRS="$WS/cdi")
    sandbox /bin/true
    expect_eq "$RC" 125 "a spec in the workspace is not read ($(last))"
    expect_match "$ERRS" "^confine: --device test.example/null=one: no CDI spec for test.example/null in $WS/cdi \(not read: $WS/cdi \(the sandbox could write there\)\)$" \
        "the refusal names the spec's place"
    chmod 0777 "$T/cdi"
    XENV=(CONFINE_CDI_SPEC_DIRS="$T/cdi")
    sandbox /bin/true
    expect_match "$RC:$ERRS" "^125:.*not read: $T/cdi \(writable by others\)" "a spec directory others may write is not read"
    chmod 0755 "$T/cdi"
    XENV=()

    # One line each, nothing run.
    echo text >"$V/not-a-device"
    chmod 0644 "$V/not-a-device"
    local ran=(-w "$WS" -- /bin/sh -c "touch $V/ran")
    expect_refused "a regular file" "^confine: --device \`$V/not-a-device\`: not a device file" --device "$V/not-a-device" "${ran[@]}"
    expect_refused "a missing device" "^confine: --device \`$V/missing\`: No such file" --device "$V/missing" "${ran[@]}"
    expect_refused "write-only" "cannot be given write-only \\(use rw\\)" --device "$DEV:/dev/given:w" "${ran[@]}"
    expect_refused "a relative DEST" "DEST \`dev/x\` is not an absolute path" --device /dev/null:dev/x:r "${ran[@]}"
    expect_refused "a CDI device without a spec" "^confine: --device nvidia.com/gpu=0: no CDI spec for nvidia.com/gpu" \
        --device nvidia.com/gpu=0 "${ran[@]}"
    expect_refused "--gpus without a spec" "^confine: --gpus all: no CDI spec for nvidia.com/gpu or amd.com/gpu .*nvidia-ctk cdi generate" \
        --gpus all "${ran[@]}"
    OPTS=()
}
run_variants scenario
