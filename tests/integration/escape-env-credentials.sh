#!/bin/bash
# escape-env-credentials: credential variables are scrubbed from the environment (AWS_*, *_TOKEN, *_API_KEY,
# SSH_AUTH_SOCK), ordinary ones are kept; --pass-env keeps one, --env sets one.
. "$(dirname "$0")/lib.sh"

scenario() {
    XENV=(AWS_SECRET_ACCESS_KEY=x-aws GITHUB_TOKEN=y-gh MY_API_KEY=z-api SSH_AUTH_SOCK=/x-sock FOO=bar)
    sandbox env
    expect_eq "$RC" 0 "env inside ($(last))"
    expect_match "$OUT" $'(^|\n)FOO=bar(\n|$)' "env inside keeps FOO"
    expect_match "$OUT" $'(^|\n)HOME='"$H"$'(\n|$)' "env inside has HOME"
    local v
    for v in AWS_SECRET_ACCESS_KEY GITHUB_TOKEN MY_API_KEY SSH_AUTH_SOCK; do
        expect_no_match "$OUT" $'(^|\n)'"$v=" "env inside must not have $v"
    done
    expect_no_match "$OUT" 'x-aws|y-gh|z-api|x-sock' "env inside must not have any secret value"

    OPTS=(--pass-env MY_API_KEY --env A=B)
    sandbox env
    expect_eq "$RC" 0 "env inside ($(last))"
    expect_match "$OUT" $'(^|\n)MY_API_KEY=z-api(\n|$)' "--pass-env MY_API_KEY"
    expect_match "$OUT" $'(^|\n)A=B(\n|$)' "--env A=B"
    expect_match "$OUT" $'(^|\n)FOO=bar(\n|$)' "FOO"
    for v in AWS_SECRET_ACCESS_KEY GITHUB_TOKEN SSH_AUTH_SOCK; do
        expect_no_match "$OUT" $'(^|\n)'"$v=" "env inside must not have $v"
    done
}
run_variants scenario
