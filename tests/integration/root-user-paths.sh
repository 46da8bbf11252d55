#!/bin/bash
# root-user-paths: root runs confine on paths an ordinary user (uid 65534 here, "alice") controls. Whatever alice
# plants or swaps on the way, nothing root-owned is written and nothing root-only is read: a symbolic link to a
# root-owned directory is refused as the workspace, as a --ro/--rw source and as a `confine run -v` volume; and a
# parent directory swapped with such a link in a loop (renameat2 RENAME_EXCHANGE) while root starts confine again and
# again never makes it mount the root-owned side. Links that stay inside alice's own files still work.
. "$(dirname "$0")/lib.sh"

ALICE=65534

# The swapper: alice exchanges D and X (a real directory and a link) as fast as she can.
SWAPPER='
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
while True:
    libc.renameat2(-100, a, -100, b, 2)
'

scenario() {
    local R=$T/paths
    mkdir -m 0755 "$R"
    # Root's side: a directory only root may write, holding a file only root may read.
    mkdir -m 0755 "$R/rootland" "$R/rootland/proj"
    echo ROOTSECRET >"$R/rootland/proj/secret"
    chmod 0600 "$R/rootland/proj/secret"
    mkdir -m 0700 "$R/rootonly"
    mkdir -m 0755 "$R/rootonly/data"
    echo ROOTSECRET >"$R/rootonly/data/file"
    local before
    before=$(tree_sum "$R/rootland"; tree_sum "$R/rootonly")
    # Alice's side: her home with a project, a link to her own project, and links to root's directories.
    local A=$R/alice
    mkdir -m 0755 "$A" "$A/proj" "$A/d" "$A/d/proj"
    ln -s "$A/proj" "$A/own-link"
    ln -s "$R/rootland/proj" "$A/proj2"
    ln -s "$R/rootonly/data" "$A/data-link"
    chown -hR $ALICE:$ALICE "$A"

    try "$CONFINE" -w "$A/proj2" -- sh -c 'id -u; touch newfile; cat secret'
    expect_eq "$RC" 125 "a workspace that is alice's link to a root-owned directory ($(last))"
    expect_match "$ERRS" "another user could redirect" "the refusal says why ($(last))"
    expect_no_match "$OUT$ERRS" ROOTSECRET "nothing root-only read through the linked workspace"

    for flag in --ro --rw; do
        try "$CONFINE" -w "$A/proj" "$flag" "$A/data-link:/mnt/data" -- cat /mnt/data/file
        expect_eq "$RC" 125 "$flag source that is alice's link to a directory behind a root-only parent ($(last))"
        expect_match "$ERRS" "another user could redirect" "$flag: the refusal says why ($(last))"
        expect_no_match "$OUT$ERRS" ROOTSECRET "nothing root-only read through $flag"
    done
    try "$CONFINE" run --rm -v "$A/proj2:/src" -w /src host sh -c 'touch /src/newfile; cat /src/secret'
    expect_eq "$RC" 125 "a confine run volume that is alice's link to a root-owned directory ($(last))"
    expect_match "$ERRS" "another user could redirect" "the volume: the refusal says why ($(last))"
    expect_no_match "$OUT$ERRS" ROOTSECRET "nothing root-only read through the volume"

    # A link from alice's files to alice's files is hers to use: it works, and what is made belongs to her.
    try "$CONFINE" -w "$A/own-link" -- sh -c 'touch made-through-link'
    expect_eq "$RC" 0 "alice's link to her own project ($(last))"
    expect_eq "$(stat -c %u "$A/proj/made-through-link")" $ALICE "owner of a file made through alice's own link"

    # The race: D (alice's real directory) and X (her link to root's) trade places in a loop while root starts
    # confine on D/proj forty times. Each run that starts must have mounted alice's project; others are refused.
    ln -s "$R/rootland" "$A/x"
    chown -h $ALICE:$ALICE "$A/x"
    bg setpriv --reuid=$ALICE --regid=$ALICE --clear-groups python3 -c "$SWAPPER" "$A/d" "$A/x"
    local i ran=0 refused=0
    for ((i = 0; i < 40; i++)); do
        try timeout 20 "$CONFINE" -w "$A/d/proj" -- sh -c "touch made-$i; cat secret 2>/dev/null; true"
        case $RC in
        0) ran=$((ran + 1)) ;;
        125) refused=$((refused + 1)) ;;
        *) fail "run $i of the race: unexpected exit ($(last))" ;;
        esac
        expect_no_match "$OUT$ERRS" ROOTSECRET "run $i of the race read root's file"
    done
    kill_bg
    echo "race: $ran runs started on alice's project, $refused refused"
    ((ran > 0 && refused > 0)) || echo "note: the swap never met a start in one of its two states"
    expect_eq "$(tree_sum "$R/rootland"; tree_sum "$R/rootonly")" "$before" "root's directories after every run"
    local made
    made=$(find "$A" -name 'made-*' ! -name made-through-link | wc -l)
    expect_eq "$made" "$ran" "every run that started wrote into alice's project ($ran ran, $refused refused)"
    [[ -z $(find "$A" -name 'made-*' ! -user $ALICE) ]] || fail "a file made during the race is not alice's"
}
run_variants scenario root
