#!/bin/bash
# escape-caps-status: inside, every capability set is empty and no_new_privs is set (also when root
# starts confine).
. "$(dirname "$0")/lib.sh"

scenario() {
    probe status
    expect_eq "$RC" 0 "status inside ($(last))"
    echo "$OUT"
    local k
    for k in CapEff CapPrm CapBnd CapInh CapAmb; do
        expect_match "$OUT" $'(^|\n)'"$k:"$'\t0000000000000000(\n|$)' "$k inside"
    done
    expect_match "$OUT" $'(^|\n)NoNewPrivs:\t1(\n|$)' "NoNewPrivs inside"
    # The same for a shell's child (nothing re-gains capabilities across exec).
    sandbox /bin/sh -c 'grep -E "^(CapEff|CapBnd|NoNewPrivs):" /proc/self/status'
    expect_eq "$OUT" $'CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1' "grep of /proc/self/status ($(last))"
}
run_variants scenario
