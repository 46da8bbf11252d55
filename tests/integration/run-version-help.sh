#!/bin/bash
# run-version-help: --version and --help print to stdout and exit 0 without starting a sandbox; --help prints one
# usage block, for the main command (naming every subcommand) and for each subcommand.
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
    expect_eq "$(grep -c '^Usage:' <<<"$OUT")" 1 "--help prints one usage block"
    local sub help=$OUT
    for sub in run probe explain doctor learn checkpoints; do
        grep -qE "^(Usage:)? +confine $sub( |$)" <<<"$help" || fail "--help: the usage block does not name confine $sub"
        try sb "$sub" --help
        expect_eq "$RC" 0 "$sub --help exit ($(last))"
        expect_eq "$(grep -c '^Usage:' <<<"$OUT")" 1 "$sub --help prints one usage block"
        expect_match "$OUT" "Usage: confine $sub" "$sub --help: its usage"
    done
}
run_variants scenario
