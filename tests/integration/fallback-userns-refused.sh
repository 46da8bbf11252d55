#!/bin/bash
# fallback-userns-refused: where user namespaces are refused (simulated: CONFINE_TEST_FEATURES=userns=0),
# confine without --best-effort exits 125 with a line about user namespaces; with --best-effort it runs the
# command in fallback mode (the report says so) and prints a warning line about user namespaces.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

scenario() {
    local marker=$WS/ran report
    mkdir -m 0755 "$V/out"
    chown "$VUID:$VGID" "$V/out"
    report=$V/out/report.json
    XENV=(CONFINE_TEST_FEATURES=userns=0)

    OPTS=()
    sandbox /bin/touch "$marker"
    expect_eq "$RC" 125 "userns=0 without --best-effort: exit status ($(last))"
    expect_match "$ERRS" "user namespaces" "userns=0 without --best-effort: stderr"
    [[ ! -e $marker ]] || fail "the command ran"

    OPTS=(--best-effort --report "$report")
    sandbox /bin/touch "$marker"
    expect_eq "$RC" 0 "userns=0 --best-effort: exit status ($(last))"
    [[ -e $marker ]] || fail "the command did not run with --best-effort"
    expect_match "$ERRS" "(^|"$'\n'")confine: warning: [^"$'\n'"]*user namespaces" "userns=0 --best-effort: a warning line about user namespaces"
    [[ -s $report ]] || fail "--report $report was not written"
    expect_eq "$(json_eval "$(head -n 1 "$report")" 'd["mode"]')" fallback "mode in the report"
}
run_variants scenario
