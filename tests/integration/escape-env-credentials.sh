#!/bin/bash
# escape-env-credentials: credential variables are scrubbed from the environment (AWS_*, *_TOKEN, *_API_KEY,
# SSH_AUTH_SOCK), ordinary ones are kept; --pass-env keeps one, --env sets one.
. "$(dirname "$0")/lib.sh"

scenario() {
    XENV=(AWS_SECRET_ACCESS_KEY=x-aws GITHUB_TOKEN=y-gh MY_API_KEY=z-api SSH_AUTH_SOCK=/x-sock FOO=bar
          MYSQL_PWD=p-mysql SSHPASS=p-ssh SENTRY_DSN=https://p-sentry@o1.ingest.example/1
          REDIS_URL=redis://:p-redis@cache:6379 DATABASE_URI=postgres://u:p-pg@db/app
          HTTPS_PROXY=http://u:p-proxy@proxy:3128 HOMEPAGE=https://example.com/docs)
    sandbox env
    expect_eq "$RC" 0 "env inside ($(last))"
    expect_match "$OUT" $'(^|\n)FOO=bar(\n|$)' "env inside keeps FOO"
    expect_match "$OUT" $'(^|\n)HOMEPAGE=https://example.com/docs(\n|$)' "env inside keeps a URL with no password"
    expect_match "$OUT" $'(^|\n)HOME='"$H"$'(\n|$)' "env inside has HOME"
    local v
    for v in AWS_SECRET_ACCESS_KEY GITHUB_TOKEN MY_API_KEY SSH_AUTH_SOCK MYSQL_PWD SSHPASS SENTRY_DSN REDIS_URL \
        DATABASE_URI HTTPS_PROXY; do
        expect_no_match "$OUT" $'(^|\n)'"$v=" "env inside must not have $v"
    done
    expect_no_match "$OUT" 'x-aws|y-gh|z-api|x-sock|p-mysql|p-ssh|p-sentry|p-redis|p-pg|p-proxy' \
        "env inside must not have any secret value"

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
