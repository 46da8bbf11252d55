#!/bin/bash
# escape-devices-attacks: three attacks on --device, each with its control.
# 1. A device given read-only at a name confine itself grants device rights to (/dev/null, /dev/zero, /dev/full,
#    /dev/random, /dev/urandom, /dev/tty, /dev/ptmx, /dev/pts/*): Landlock's rules are taken by path, so the
#    built-in rule there would let a write through; such a DEST is refused (125). Control: the same node at
#    /dev/given:r refuses the write, rw lets it through (the probe sees both).
# 2. A CDI spec planted in the workspace, its directory named through a symlink, `//` or `/./`: never read (the
#    directory is judged by its real path). Control: the plain path is refused too. The attack: a run plants a spec
#    there; the next run would trust it.
# 3. A spec of under 1 MiB whose devices share one aliased containerEdits (YAML anchors), which copied per device
#    would take gigabytes: one line and 125, at once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

[[ $SUITE_UID == 0 ]] || skip "only root can make the device node the test gives"

DEV=$T/given-null
FAILED=()
limited() { (ulimit -v 4000000; "$@"); }
check() { [[ $1 =~ $2 ]] || FAILED+=("$3: expected /$2/, got $(last)"); }

WRITE='printf x 2>/dev/null >"$1" && echo write=ok || echo write=refused'

cdi_spec() {
    mkdir -m 0755 -p "$1"
    cat >"$1/test.json" <<EOF
{"cdiVersion": "0.6.0", "kind": "test.example/null",
 "devices": [{"name": "one", "containerEdits": {"deviceNodes": [{"path": "/dev/cdi-null", "hostPath": "$DEV"}],
                                               "env": ["PLANTED=yes"]}}]}
EOF
}

scenario() {
    [[ -c $DEV ]] || mknod -m 0666 "$DEV" c 1 3
    FAILED=()

    # 1. Controls first: the probe tells a refused write from an allowed one.
    set_mode full --device "$DEV:/dev/given:r"
    sandbox /bin/sh -c "$WRITE" sh /dev/given
    expect_eq "$OUT" write=refused "control: r at /dev/given ($(last))"
    set_mode full --device "$DEV:/dev/given:rw"
    sandbox /bin/sh -c "$WRITE" sh /dev/given
    expect_eq "$OUT" write=ok "control: rw at /dev/given ($(last))"
    local d
    for d in /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty /dev/ptmx /dev/pts/ptmx; do
        set_mode full --device "$DEV:$d:r"
        sandbox /bin/sh -c "$WRITE" sh "$d"
        check "$RC:$OUT" "^(0:write=refused|125:)$" "r at $d: a write must be refused (or the DEST refused)"
    done

    # 2. Plant a spec in the workspace; name its directory other ways.
    cdi_spec "$WS/cdi"
    chown -R "$VUID:$VGID" "$WS/cdi"
    ln -sfn "$WS/cdi" "$V/cdi-link"
    set_mode full --device test.example/null=one
    XENV=(CONFINE_CDI_SPEC_DIRS="$WS/cdi")
    sandbox /bin/sh -c 'echo "planted=$PLANTED"'
    expect_eq "$RC" 125 "control: the workspace's spec dir by its plain path is not read ($(last))"
    local name
    for name in "$V/cdi-link" "${WS%/*}//${WS##*/}/cdi" "${WS%/*}/./${WS##*/}/cdi"; do
        XENV=(CONFINE_CDI_SPEC_DIRS="$name")
        sandbox /bin/sh -c 'echo "planted=$PLANTED"'
        check "$RC" "^125$" "spec dir $name (the workspace's) must not be read"
    done

    # 3. An alias bomb under 1 MiB: one line and 125 in a few seconds, not a crash.
    mkdir -m 0755 -p "$V/amp"
    python3 - "$V/amp/amp.yaml" <<'EOF'
import sys
s = 'kind: test.example/null\nE: &E {env: [' + ','.join(f'V{i}=x' for i in range(30000)) + ']}\ndevices:\n'
s += ''.join(f'- {{name: d{i}, containerEdits: *E}}\n' for i in range(15000))
assert len(s) < 1 << 20
open(sys.argv[1], 'w').write(s)
EOF
    chown -R "$VUID:$VGID" "$V/amp"
    XENV=(CONFINE_CDI_SPEC_DIRS="$V/amp")
    set_mode full --device test.example/null=d1
    local start=$SECONDS
    try limited sb -w "$WS" "${OPTS[@]}" -- /bin/true
    check "$RC:$ERRS" "^125:confine: [^"$'\n'"]*more than 4096 device nodes, mounts and variables" \
        "alias-bomb spec: one line, not a crash"
    ((SECONDS - start < 5)) || FAILED+=("alias-bomb spec: $((SECONDS - start)) s")
    XENV=()
    OPTS=()

    ((${#FAILED[@]} == 0)) || fail "$(printf '\n  %s' "${FAILED[@]}")"
}
run_variants scenario
