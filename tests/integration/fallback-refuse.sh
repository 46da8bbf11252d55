#!/bin/bash
# fallback-refuse: --no-namespaces without --best-effort is refused with exit 125 before anything runs, in one
# line saying what to add (with every Landlock right there is, pinned: ABI 10); a promise lost for want of this
# kernel's Landlock (the host's socket files below ABI 9) is named besides; explain names the promises fallback
# mode would lose (secret files, private /tmp, ...).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

scenario() {
    local marker=$WS/ran
    OPTS=(--no-namespaces)
    XENV=(CONFINE_TEST_FEATURES=landlock=10)
    sandbox /bin/touch "$marker"
    expect_eq "$RC" 125 "--no-namespaces without --best-effort: exit status ($(last))"
    expect_eq "$OUT" "" "stdout"
    [[ ! -e $marker ]] || fail "the command ran"
    # The flag's own consequence is one line: how many promises it gives up, what to add, where they are listed.
    expect_match "$ERRS" '^confine: --no-namespaces gives up [0-9]+ promises[^'$'\n'']*$' "one line counting the promises given up ($(last))"
    expect_match "$ERRS" "add --best-effort" "stderr says what to add"
    # Below ABI 9 the host's socket files are lost for want of Landlock, not of namespaces: named on their own.
    XENV=(CONFINE_TEST_FEATURES=landlock=8)
    sandbox /bin/touch "$marker"
    expect_eq "$RC" 125 "--no-namespaces on Landlock ABI 8: exit status ($(last))"
    expect_match "$ERRS" "--no-namespaces gives up [0-9]+ promises" "ABI 8: the count is still one line ($(last))"
    expect_match "$ERRS" "unix socket files.*needs Landlock ABI 9" "ABI 8: the socket files are named ($(last))"
    [[ ! -e $marker ]] || fail "the command ran"
    XENV=()
    # ... and explain lists each of them.
    try sb explain --no-namespaces --best-effort -w "$WS" -- true
    expect_match "$OUT" "secret files" "explain names the lost secret-file masking"
    expect_match "$OUT" "/tmp" "explain names the lost private /tmp"

    # Control: with --best-effort the command runs (and the same promises are listed as warnings).
    OPTS=(--no-namespaces --best-effort)
    sandbox /bin/touch "$marker"
    expect_eq "$RC" 0 "--no-namespaces --best-effort: exit status ($(last))"
    [[ -e $marker ]] || fail "the command did not run with --best-effort"
    expect_match "$ERRS" "secret files" "--best-effort: the lost promises are listed as warnings"
}
run_variants scenario
