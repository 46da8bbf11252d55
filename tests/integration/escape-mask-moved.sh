#!/bin/bash
# escape-mask-moved: a user's --mask names something that must exist. Run 1 moves the masked file's directory
# away from inside (data/ -> other/); run 2, given the same `--mask data/prod.key`, must not start (exit 125, one
# line naming the mask) rather than skip the mask and let the command read the key at its new name. Judged from
# the host: the key's contents never come out of the sandbox, and the key is still there, unchanged.
. "$(dirname "$0")/lib.sh"

scenario() {
    local key="CANARY-prod-key-$RANDOM$RANDOM"
    mkdir -m 0755 "$WS/data"
    echo "$key" >"$WS/data/prod.key"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$WS"

    # While the key is where the mask says, it reads as empty.
    OPTS=(--mask data/prod.key)
    sandbox cat "$WS/data/prod.key"
    expect_eq "$RC:$OUT" "0:" "cat of the masked key ($(last))"

    # Run 1: the agent moves the directory; the mask still names data/prod.key, which is gone.
    sandbox mv "$WS/data" "$WS/other"
    expect_eq "$RC" 0 "run 1 moves data/ to other/ ($(last))"
    [[ -f $WS/other/prod.key && ! -e $WS/data ]] || fail "run 1 did not move the directory on the host"

    # Run 2: the same mask; the command tries the key's new name.
    sandbox cat "$WS/other/prod.key"
    expect_eq "$RC" 125 "run 2 with --mask data/prod.key after the move ($(last))"
    expect_no_match "$OUT$ERRS" "$key" "the key's contents, read through its new name"
    expect_match "$ERRS" "cannot mask \`$WS/data/prod.key\`: No such file or directory \(a mask must name something that exists" \
        "the refusal names the mask ($(last))"
    expect_eq "$(grep -c . <<<"$ERRS")" 1 "one line on stderr ($(last))"
    expect_eq "$(cat "$WS/other/prod.key")" "$key" "the key on the host after run 2"

    # Masking it where it is now works.
    OPTS=(--mask other/prod.key)
    sandbox cat "$WS/other/prod.key"
    expect_eq "$RC:$OUT" "0:" "cat with the mask at the key's new name ($(last))"
}
run_variants scenario
