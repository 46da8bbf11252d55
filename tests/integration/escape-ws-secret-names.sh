#!/bin/bash
# escape-ws-secret-names: the widened secret names are masked in any letter case (.ENV.Local, prod.key, .npmrc,
# terraform.tfstate), private keys inside a directory the scan does not walk (node_modules/pkg/id_rsa) too; a
# profile's [secrets] and --scan-skip/--scan-walk change what is masked; without -v one line says how many files
# were masked and variables dropped. Every file planted by the host user reads as empty inside, and the host
# files are unchanged after the run.
. "$(dirname "$0")/lib.sh"

SECRETS=(.ENV.Local prod.key node_modules/pkg/id_rsa .npmrc terraform.tfstate)

plant() {
    local f
    mkdir -p "$WS/node_modules/pkg" "$WS/build"
    for f in "${SECRETS[@]}" node_modules/pkg/.env build/.env build/ci.p12 notes.txt db.secret; do
        echo "CANARY-$f-$RANDOM" >"$WS/$f"
    done
    echo "module.exports = 1" >"$WS/node_modules/pkg/index.js"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$WS"
}

# Each path must read as empty inside, through the probe and through a shell.
expect_masked() {
    local f
    for f in "$@"; do
        probe read "$WS/$f"
        expect_eq "$OUT" "OK 0" "read $f inside ($(last))"
    done
}

expect_readable() {
    local f
    for f in "$@"; do
        probe read "$WS/$f"
        expect_match "$OUT" "^OK [1-9][0-9]* " "read $f inside (it is not a secret here) ($(last))"
    done
}

scenario() {
    plant
    local before
    before=$(tree_sum "$WS")

    expect_masked "${SECRETS[@]}" build/.env build/ci.p12
    expect_readable notes.txt node_modules/pkg/index.js db.secret
    # Inside node_modules only key names are looked for: its .env is the package's, and stays readable.
    expect_readable node_modules/pkg/.env
    sandbox /bin/sh -c 'cat .ENV.Local prod.key node_modules/pkg/id_rsa .npmrc terraform.tfstate'
    expect_eq "$RC:$OUT" "0:" "cat of the masked files inside ($(last))"
    expect_match "$ERRS" "confine: masked 7 files; -v lists them" "the start line, with nothing dropped"

    # The start line: counts without -v (the five planted names and build's two), the list with -v.
    XENV=(GITHUB_TOKEN=ghp_x NPM_TOKEN=npm_x)
    sandbox /bin/true
    expect_eq "$RC" 0 "run with credentials in the environment ($(last))"
    expect_match "$ERRS" "confine: masked 7 files, dropped 2 variables; -v lists them" "the start line"
    OPTS=(-q)
    sandbox /bin/true
    expect_no_match "$ERRS" "masked" "-q says nothing"
    OPTS=(-v)
    sandbox /bin/true
    expect_match "$ERRS" "masked $WS/node_modules/pkg/id_rsa" "-v lists each file"
    expect_no_match "$ERRS" "-v lists them" "-v lists instead of counting"
    XENV=()

    # --scan-walk: node_modules is walked like any directory; --scan-skip: build is searched for keys only.
    OPTS=(--scan-walk node_modules --scan-skip build)
    expect_masked node_modules/pkg/.env build/ci.p12 "${SECRETS[@]}"
    expect_readable build/.env
    # A profile adds names to mask.
    printf 'format = "confine-profile/1"\nextends = "default"\n[secrets]\nmask = ["*.SECRET"]\n' >"$T/names.toml"
    chmod 0644 "$T/names.toml"
    OPTS=(--profile "$T/names.toml")
    expect_masked db.secret "${SECRETS[@]}"
    # A file the scan masks and --mask names too is masked once, and the sandbox starts.
    OPTS=(--mask .npmrc --mask prod.key)
    expect_masked .npmrc prod.key
    OPTS=(--scan-walk nosuchdir)
    sandbox /bin/true
    expect_eq "$RC" 125 "--scan-walk of a directory that is not skipped ($(last))"
    expect_match "$ERRS" "nosuchdir. is not a directory the secret scan skips" "--scan-walk error"
    OPTS=()

    # Writing through the masks must not reach the host files.
    for f in "${SECRETS[@]}"; do
        probe write "$WS/$f" overwritten
    done
    sandbox /bin/sh -c 'rm -f .ENV.Local prod.key node_modules/pkg/id_rsa 2>/dev/null; mv .npmrc x 2>/dev/null; true'
    expect_eq "$(tree_sum "$WS")" "$before" "host workspace after the runs"
}
run_variants scenario
