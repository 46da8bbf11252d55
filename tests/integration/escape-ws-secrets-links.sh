#!/bin/bash
# escape-ws-secrets-links: run 1 plants second names for secrets (`ln -s notes.txt .env.local`, a hard link
# `ln data.txt .env.production`); the user then writes keys into the secret names on the host; run 2 must not read
# them through any name: the link, its target, the other hard link. A hard link whose other name is outside the
# workspace is masked where the scan finds it and the rest is said in a warning. Judged on the host: the files and
# the link are intact.
. "$(dirname "$0")/lib.sh"

scenario() {
    local key1="CANARY-link-$RANDOM$RANDOM" key2="CANARY-hard-$RANDOM$RANDOM"
    echo "plain notes" >"$WS/notes.txt"
    echo "plain data" >"$WS/data.txt"
    echo "just a readme" >"$WS/README"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$WS"
    sandbox sh -c 'ln -s notes.txt .env.local && ln data.txt .env.production'
    expect_eq "$RC" 0 "run 1 plants the links ($(last))"
    # The user writes the keys the way an editor may: through the link, into the file.
    host sh -c "echo $key1 >'$WS/.env.local' && echo $key2 >'$WS/.env.production'"
    expect_eq "$(cat "$WS/notes.txt")" "$key1" "host control: the key went through the link into notes.txt"
    expect_eq "$(cat "$WS/data.txt")" "$key2" "host control: the key is in data.txt too"

    sandbox sh -c 'for f in .env.local notes.txt .env.production data.txt; do cat $f; done; readlink .env.local; \
        ln -sf README .env.local 2>/dev/null && echo relinked; cat README'
    expect_eq "$RC" 0 "run 2 ($(last))"
    expect_no_match "$OUT" "$key1|$key2" "run 2 read a key through a second name ($(last))"
    expect_no_match "$OUT" "relinked" "run 2 re-pointed the masked link ($(last))"
    expect_match "$OUT" "just a readme" "the rest of the workspace stays readable ($(last))"
    [[ -L $WS/.env.local && $(readlink "$WS/.env.local") == notes.txt ]] || fail "the link on the host changed"
    expect_eq "$(cat "$WS/notes.txt")" "$key1" "notes.txt on the host after run 2"
    expect_eq "$(cat "$WS/data.txt")" "$key2" "data.txt on the host after run 2"

    # A third name outside the workspace: the two inside stay masked, and the run says one is out of its reach.
    mkdir -m 0755 "$V/elsewhere"
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$V/elsewhere"
    host ln "$WS/data.txt" "$V/elsewhere/kept"
    sandbox sh -c 'cat .env.production data.txt'
    expect_eq "$RC" 0 "run 3 ($(last))"
    expect_no_match "$OUT" "$key2" "run 3 read the hard-linked key ($(last))"
    expect_match "$ERRS" "\.env\.production has 3 hard links but the scan found 2 of them" "the warning ($(last))"
    expect_eq "$(cat "$V/elsewhere/kept")" "$key2" "the outside name on the host"
}
run_variants scenario
