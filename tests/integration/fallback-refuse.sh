#!/bin/bash
# fallback-refuse: --no-namespaces without --best-effort is refused with exit 125 before anything runs, and
# stderr names the promises fallback mode would lose (secret files, private /tmp, ...).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

scenario() {
    local marker=$WS/ran
    OPTS=(--no-namespaces)
    sandbox /bin/touch "$marker"
    expect_eq "$RC" 125 "--no-namespaces without --best-effort: exit status ($(last))"
    expect_eq "$OUT" "" "stdout"
    [[ ! -e $marker ]] || fail "the command ran"
    expect_match "$ERRS" "secret files" "stderr names the lost secret-file masking"
    expect_match "$ERRS" "/tmp" "stderr names the lost private /tmp"
    expect_match "$ERRS" "best-effort" "stderr says how to run anyway"

    # Control: with --best-effort the command runs (and the same promises are listed as warnings).
    OPTS=(--no-namespaces --best-effort)
    sandbox /bin/touch "$marker"
    expect_eq "$RC" 0 "--no-namespaces --best-effort: exit status ($(last))"
    [[ -e $marker ]] || fail "the command did not run with --best-effort"
    expect_match "$ERRS" "secret files" "--best-effort: the lost promises are listed as warnings"
}
run_variants scenario
