#!/bin/bash
# run-tools: everyday tools work inside: git status in the workspace, python3, a shell pipeline.
. "$(dirname "$0")/lib.sh"

scenario() {
    host git init -q "$WS"
    echo .probe/ >>"$WS/.git/info/exclude"
    echo hi >"$WS/new-file"
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$WS/new-file"
    sandbox git status --porcelain
    expect_eq "$RC:$OUT" "0:?? new-file" "git status inside ($(last))"
    sandbox python3 -c 'print(1)'
    expect_eq "$RC:$OUT" "0:1" "python3 inside ($(last))"
    sandbox /bin/sh -c 'pwd; ls | sort | tr "\n" " "'
    expect_eq "$OUT" "$WS"$'\n'"new-file " "pwd and ls inside ($(last))"
}
run_variants scenario
