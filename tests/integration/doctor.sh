#!/bin/bash
# doctor: `confine doctor` runs the careful user's checks inside a real sandbox with the given options. With the
# defaults every check passes (exit 0); a bound-back ~/.ssh and a credential variable set with --env each turn
# their check into a FAIL with the reason, and the exit status into 1.
. "$(dirname "$0")/lib.sh"

# has_line REGEX WHAT: some line of $OUT matches the (extended) regex.
has_line() { grep -qE -- "$1" <<<"$OUT" || fail "$2: no line matching /$1/ in: $OUT"; }

scenario() {
    try sb doctor -w "$WS"
    expect_eq "$RC" 0 "confine doctor with the defaults ($(last))"
    expect_eq "$(grep -c '^PASS  ' <<<"$OUT")" 9 "nine PASS lines (three layers, six checks) ($(last))"
    ! grep -q '^FAIL' <<<"$OUT" || fail "a FAIL line with the defaults: $OUT"
    has_line '^PASS  ls ~/.ssh +~/.ssh is not there' "the ~/.ssh check says why"
    has_line '^PASS  an outbound connection +connect 1\.1\.1\.1:443: Network is unreachable' "the outbound check"

    try sb doctor -w "$WS" --ro "$H/.ssh" --env MY_API_TOKEN=leaked
    expect_eq "$RC" 1 "confine doctor with ~/.ssh bound back and a token set ($(last))"
    has_line '^FAIL  ls ~/.ssh +~/.ssh is visible inside the sandbox' "the ~/.ssh check fails"
    has_line "^FAIL  env \| grep -iE 'key\|token\|secret' +credential-like variables inside: MY_API_TOKEN" \
        "the environment check names the variable"
    has_line '^PASS  cat ~/.aws/credentials' "the other checks still pass"
}
run_variants scenario
