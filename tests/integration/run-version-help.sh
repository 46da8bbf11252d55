#!/bin/bash
# run-version-help: --version and --help print to stdout and exit 0 without starting a sandbox.
. "$(dirname "$0")/lib.sh"

scenario() {
    try sb --version
    expect_eq "$RC" 0 "--version exit ($(last))"
    expect_match "$OUT" '[0-9]+\.[0-9]+\.[0-9]+' "--version output"
    try sb --help
    expect_eq "$RC" 0 "--help exit ($(last))"
    local flag
    for flag in --workspace --net --ro --rw --tmpfs --mask --env --pass-env --preserve-fd --allow-git-config --user; do
        expect_match "$OUT" "(^|[^a-z-])$flag([^a-z-]|$)" "--help mentions $flag"
    done
}
run_variants scenario
