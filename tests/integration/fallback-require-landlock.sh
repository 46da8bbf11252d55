#!/bin/bash
# fallback-require-landlock: --require landlock refuses to run (exit 125, stderr names landlock) when Landlock
# is unavailable (CONFINE_TEST_FEATURES=landlock=0), even with --best-effort, in full and in fallback mode;
# --require seccomp likewise.  Without --require, --best-effort runs the command.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

scenario() {
    local marker=$WS/ran mode
    for mode in full fallback; do
        set_mode "$mode" --best-effort --require landlock
        XENV=(CONFINE_TEST_FEATURES=landlock=0)
        sandbox /bin/touch "$marker"
        expect_eq "$RC" 125 "[$mode] --require landlock without Landlock: exit status ($(last))"
        expect_match "$ERRS" "landlock" "[$mode] stderr names landlock"
        [[ ! -e $marker ]] || fail "[$mode] the command ran"

        set_mode "$mode" --best-effort --require seccomp
        XENV=(CONFINE_TEST_FEATURES=seccomp=0)
        sandbox /bin/touch "$marker"
        expect_eq "$RC" 125 "[$mode] --require seccomp without seccomp: exit status ($(last))"
        expect_match "$ERRS" "seccomp" "[$mode] stderr names seccomp"
        [[ ! -e $marker ]] || fail "[$mode] the command ran"

        # Control: --best-effort without --require runs, and says what is missing (no -q here).
        OPTS=(--best-effort)
        [[ $mode == full ]] || OPTS+=(--no-namespaces)
        XENV=(CONFINE_TEST_FEATURES=landlock=0)
        sandbox /bin/touch "$marker"
        expect_eq "$RC" 0 "[$mode] --best-effort without Landlock: exit status ($(last))"
        [[ -e $marker ]] || fail "[$mode] the command did not run"
        expect_match "$ERRS" "[Ll]andlock" "[$mode] --best-effort without Landlock: warning"
        rm -f "$marker"
        # And --require landlock with Landlock present runs.
        set_mode "$mode" --best-effort --require landlock
        XENV=()
        sandbox /bin/touch "$marker"
        expect_eq "$RC" 0 "[$mode] --require landlock with Landlock: exit status ($(last))"
        rm -f "$marker"
    done
}
run_variants scenario
