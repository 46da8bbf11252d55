#!/bin/bash
# escape-ws-secrets-race: while the host renames a directory holding `.env` back and forth (as another run could),
# 40 runs each read both of its names. Every run either starts with the secret masked where it is, or refuses to
# start (exit 125, one line saying the workspace changed): none ever prints the secret. Judged on the host: the
# file is intact.
. "$(dirname "$0")/lib.sh"

scenario() {
    local key="CANARY-race-$RANDOM$RANDOM" i ran=0 refused=0
    mkdir -m 0755 "$WS/a"
    echo "$key" >"$WS/a/.env"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$WS"
    host_bg sh -c "cd '$WS' && while :; do mv a b 2>/dev/null; mv b a 2>/dev/null; done"
    local mover=$BG_PID
    for ((i = 0; i < 40; i++)); do
        sandbox sh -c 'cat a/.env b/.env 2>/dev/null; true'
        expect_no_match "$OUT$ERRS" "$key" "run $i read the secret ($(last))"
        case $RC in
            0) ran=$((ran + 1)) ;;
            125)
                refused=$((refused + 1))
                expect_match "$ERRS" "(moved or replaced after the scan for secret files|moved while .* was scanned for secret files).*run confine again" \
                    "run $i's refusal ($(last))"
                expect_eq "$(grep -c . <<<"$ERRS")" 1 "run $i: one line on stderr ($(last))"
                ;;
            *) fail "run $i: unexpected exit ($(last))" ;;
        esac
    done
    kill -KILL "$mover"
    wait "$mover" 2>/dev/null || true
    echo "# $VARIANT: $ran runs started masked, $refused refused"
    [[ $ran -gt 0 ]] || fail "no run started while the directory moved (all $refused refused)"
    expect_eq "$(cat "$WS"/[ab]/.env)" "$key" "the secret on the host, under one of its names"
}
run_variants scenario
