#!/bin/bash
# escape-home-aws: ~/.aws/credentials cannot be read inside; $HOME is an empty tmpfs.
. "$(dirname "$0")/lib.sh"

scenario() {
    host_probe read "$H/.aws/credentials"
    expect_eq "$RC" 0 "host control read ($(last))"

    expect_errno ENOENT read "$H/.aws/credentials"
    expect_errno ENOENT ls "$H/.aws"
    # Tools that look the file up through $HOME see nothing either.
    sandbox /bin/sh -c 'cat "$HOME/.aws/credentials"'
    expect_eq "$RC" 1 "cat \$HOME/.aws/credentials exit ($(last))"
    expect_match "$ERRS" "No such file or directory" "cat's error"
    expect_no_match "$OUT$ERRS" "$AWS_CANARY" "output"
}
run_variants scenario
