#!/bin/bash
# run-setup-errors: bad setups fail with 125 and one line "confine: <step>: <reason>" on stderr, run nothing
# and create nothing on disk: a missing workspace, an unknown flag, a missing command, and a workspace that
# is / or is or contains $HOME.
. "$(dirname "$0")/lib.sh"

# expect_setup_error WHAT CONFINE-ARGS...: confine must exit 125 with exactly one "confine: ..." line on
# stderr, nothing on stdout, and not run the command.
expect_setup_error() {
    local what=$1
    shift
    try sb "$@"
    expect_eq "$RC" 125 "$what: exit code ($(last))"
    expect_match "$ERRS" '^confine: [^'$'\n'']+$' "$what: stderr must be one line 'confine: ...'"
    expect_eq "$OUT" "" "$what: stdout"
    [[ ! -e $V/ran ]] || fail "$what: the command ran"
}

scenario() {
    local marker=$V/ran snapshot
    chmod 0777 "$V"   # so that a command that wrongly runs can leave the marker
    snapshot=$(tree_sum "$V")

    expect_setup_error "missing workspace" -w "$V/missing/ws" -- touch "$marker"
    # A failed setup step says which step and why: "confine: <step>: <reason>".
    expect_match "$ERRS" "^confine: [^:]*$V/missing/ws[^:]*: No such file or directory\$" "missing workspace: message"
    [[ ! -e $V/missing ]] || fail "confine created the missing workspace"

    expect_setup_error "unknown flag" -w "$WS" --no-such-flag -- touch "$marker"
    expect_setup_error "flag without its value" -w "$WS" --net
    expect_setup_error "bad --net value" -w "$WS" --net sometimes -- touch "$marker"
    expect_setup_error "no command" -w "$WS" --
    expect_setup_error "workspace is /" -w / -- touch "$marker"
    expect_setup_error "workspace is \$HOME" -w "$H" -- touch "$marker"
    expect_setup_error "workspace contains \$HOME" -w "$V/home" -- touch "$marker"
    expect_setup_error "relative --ro destination" -w "$WS" --ro "$WS:relative/dest" -- touch "$marker"
    expect_setup_error "--mask outside the workspace" -w "$WS" --mask ../escape -- touch "$marker"

    expect_eq "$(tree_sum "$V")" "$snapshot" "nothing created or changed on disk by failed setups"
    chmod 0755 "$V"
}
run_variants scenario
