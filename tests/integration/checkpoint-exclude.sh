#!/bin/bash
# checkpoint-exclude: `--checkpoint-exclude node_modules` (at any depth) and a profile's `[checkpoint] exclude`
# leave caches out of a checkpoint: judged on the host, the store holds none of them, the start-up prints no
# warning for them, `confine checkpoints list` names them as excluded, and a restore brings back the rest while
# leaving the excluded ones as the run left them (not deleted). A pattern with '/' is one line, exit 125.
. "$(dirname "$0")/lib.sh"

store_of() { sed -n 's/.*(store \(.*\)):$/\1/p' <<<"$1"; }
checkpoint_id() { sed -n 's/^confine: checkpoint \([^ ]*\) saved .*/\1/p' <<<"$1"; }

scenario() {
    mkdir -p "$WS/node_modules/pkg" "$WS/app/node_modules/dep" "$WS/src" "$WS/build"
    echo "module" >"$WS/node_modules/pkg/index.js"
    echo "dep" >"$WS/app/node_modules/dep/index.js"
    echo "object" >"$WS/build/a.o"
    echo "code" >"$WS/src/main.c"
    printf 'format = "confine-profile/1"\n[checkpoint]\nexclude = ["build"]\n' >"$V/p.toml"
    [[ $SUITE_UID != 0 ]] || chown -hR "$VUID:$VGID" "$WS"

    OPTS=(--profile "$V/p.toml" --checkpoint --checkpoint-exclude node_modules)
    sandbox /bin/sh -c 'rm -r src; echo changed >node_modules/pkg/index.js; echo changed >build/a.o'
    expect_eq "$RC" 0 "the run ($(last))"
    local id
    id=$(checkpoint_id "$ERRS")
    expect_match "$ERRS" "checkpoint $id saved \\([0-9]+ files, .*3 excluded\\)" "the start-up line counts the exclusions"
    expect_no_match "$ERRS" "warning" "no warning for names the user excluded"

    try sb checkpoints list -w "$WS"
    local store
    store=$(store_of "$OUT")
    [[ -d $store/$id/tree/src ]] || fail "src is not in the checkpoint (the test proves nothing): $OUT"
    expect_eq "$(cd "$store/$id/tree" && find . -name node_modules -o -name build)" "" "excluded names in the store"
    expect_match "$OUT" "excluded: app/node_modules \\(node_modules\\)" "list names a nested exclusion"
    expect_match "$OUT" "excluded: build \\(build\\)" "list names the profile's exclusion"

    try sb checkpoints restore -w "$WS"
    expect_eq "$RC" 0 "restore ($(last))"
    expect_eq "$(cat "$WS/src/main.c")" code "src/main.c after the restore"
    expect_eq "$(cat "$WS/node_modules/pkg/index.js")" changed "an excluded directory is left as the run left it"
    expect_eq "$(cat "$WS/build/a.o")" changed "the profile's excluded directory is left as the run left it"
    expect_eq "$(cat "$WS/app/node_modules/dep/index.js")" dep "a nested excluded directory is still there"
    expect_no_match "$ERRS" "warning" "no warning about excluded names on restore"

    OPTS=(--checkpoint --checkpoint-exclude a/b)
    sandbox /bin/true
    expect_eq "$RC" 125 "a pattern with '/' ($(last))"
    expect_match "$ERRS" "^confine: --checkpoint-exclude \`a/b\`: a pattern of one name" "the message for a pattern with '/'"

    # Without --checkpoint the flag would change nothing: refused, and nothing runs.
    OPTS=(--checkpoint-exclude node_modules)
    sandbox /bin/sh -c 'touch ran'
    expect_eq "$RC" 125 "--checkpoint-exclude alone ($(last))"
    expect_match "$ERRS" "^confine: --checkpoint-exclude needs --checkpoint" "the message for --checkpoint-exclude alone"
    [[ ! -e $WS/ran ]] || fail "the command ran although its flags were refused"
}
run_variants scenario
