#!/bin/bash
# escape-host-planted-outputs: confine never writes through a name the sandbox planted. Run 1 plants, inside the
# workspace, `report.json` and `net.log` as symbolic links to a canary file outside it, `sub` as a link to the
# canary's directory, and a FIFO; run 2 names them in --report and --net-log. Each run 2 must exit 125 at start
# with one line naming the link (or the FIFO), run nothing, and leave the canary's content, mtime and directory
# as they were. As root, a hard link to the canary (a second name, planted on the host) is refused too. A
# --net-log that cannot be opened is refused at start, not lost record by record. Controls: a plain --report
# and --net-log file are written.
. "$(dirname "$0")/lib.sh"

# refused WHAT REGEX CONFINE-ARGS...: exit 125, one line on stderr matching REGEX, the command did not run.
refused() {
    local what=$1 regex=$2
    shift 2
    try sb -w "$WS" "$@" -- sh -c 'echo ran > ran-marker'
    expect_eq "$RC" 125 "$what: exit code ($(last))"
    expect_match "$ERRS" '^confine: [^'$'\n'']+$' "$what: stderr must be one line 'confine: ...'"
    expect_match "$ERRS" "$regex" "$what: the reason"
    [[ ! -e $WS/ran-marker ]] || fail "$what: the command ran"
}

scenario() {
    local vault=$V/vault canary=$V/vault/shadow before
    mkdir -m 0700 "$vault"
    echo "root:precious-hash:19000:0:99999:7:::" >"$canary"
    chmod 0600 "$canary"
    chown -R "$VUID:$VGID" "$vault"
    touch -d '2020-01-01 00:00:00' "$canary"
    before="$(sha256sum "$canary") $(stat -c '%Y %s %U' "$canary") $(ls -A "$vault" | tr '\n' ' ')"

    # Run 1: the sandbox plants the names (a link's target is only a string: it needs no access to the canary).
    sandbox sh -c "ln -s '$canary' report.json && ln -s '$canary' net.log && ln -s '$vault' sub && mkfifo fifo.json"
    expect_eq "$RC" 0 "run 1 plants the links ($(last))"
    [[ -L $WS/report.json && -L $WS/net.log && -L $WS/sub && -p $WS/fifo.json ]] || fail "run 1 did not plant: $(ls -la "$WS")"

    # Run 2: the next run names them.
    refused "--report through a planted link" "--report \`$WS/report.json\`: is a symbolic link" --report "$WS/report.json"
    refused "--net-log through a planted link" "--net-log \`$WS/net.log\`: is a symbolic link" \
        --net proxy --allow example.com --net-log "$WS/net.log"
    refused "--report below a planted directory link" "\`$WS/sub\` is a symbolic link" --report "$WS/sub/report.json"
    refused "--net-log below a planted directory link" "\`$WS/sub\` is a symbolic link" \
        --net proxy --allow example.com --net-log "$WS/sub/net.log"
    refused "--report on a planted FIFO" "--report \`$WS/fifo.json\`: is not a regular file" --report "$WS/fifo.json"
    if [[ $VARIANT == root ]]; then
        ln "$canary" "$WS/hard.json"
        refused "--report on a second name of the canary" "--report \`$WS/hard.json\`: has 2 names" --report "$WS/hard.json"
        rm "$WS/hard.json"
        # Someone else's file: root writes only to its own.
        touch "$WS/theirs.json"
        chown 65534:65534 "$WS/theirs.json"
        refused "--report on someone else's file" "is owned by uid 65534, not by you" --report "$WS/theirs.json"
    fi
    refused "--net-log that cannot be opened" "--net-log \`$V/missing/net.log\`: No such file or directory" \
        --net proxy --allow example.com --net-log "$V/missing/net.log"

    expect_eq "$(sha256sum "$canary") $(stat -c '%Y %s %U' "$canary") $(ls -A "$vault" | tr '\n' ' ')" "$before" \
        "the canary and its directory after every run 2"

    # Controls: plain files are written, the report replaced, the log appended to.
    local out=$V/out
    mkdir -m 0755 "$out"
    chown "$VUID:$VGID" "$out"
    echo stale >"$out/report.json"
    chown "$VUID:$VGID" "$out/report.json"
    try sb -w "$WS" --report "$out/report.json" --net proxy --allow example.com --net-log "$out/net.log" -- true
    expect_eq "$RC" 0 "control run ($(last))"
    expect_match "$(<"$out/report.json")" '^\{"confine":"[^"]*","event":"started"' "control: --report replaced"
    expect_eq "$(wc -l <"$out/report.json")" 1 "control: --report holds this run's line only"
    expect_eq "$(stat -c '%F %U' "$out/net.log")" "regular empty file $(id -un "$VUID")" "control: --net-log made at start"
}
run_variants scenario
