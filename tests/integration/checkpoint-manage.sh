#!/bin/bash
# checkpoint-manage: living with checkpoints. `confine checkpoints list`, run from a subdirectory of the workspace
# with no -w, finds the workspace's checkpoints and shows each one's time, the command it preceded (as typed, quotes
# and all) and its size; `--json` gives the same, checked against the host. A restore names on stderr the file it
# cannot bring back (a FIFO the checkpoint did not save, deleted by the run), even with -q, and does not just say
# "restored". `checkpoints rm ID` removes one checkpoint (its store directory is gone on the host) and the files it
# shared with the others stay whole in them; `prune --keep N` keeps the N newest, `--keep 0` none, and sweeps what
# an interrupted save or removal left (never the directory of one still running). Attacks on the
# store: ids such as `../x`, `..`, `/abs/path`, `state` or `.new-1` are one line, exit 125, and delete nothing;
# so is a --keep that is not a number.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is not installed"

as_user() { [[ $SUITE_UID != 0 ]] || chown -hR "$VUID:$VGID" "$@"; }
checkpoint_id() { sed -n 's/^confine: checkpoint \([^ ]*\) saved .*/\1/p' <<<"$1"; }

# refused WHY-REGEX ARGS...: confine ARGS exits 125 with one line matching WHY-REGEX.
refused() {
    local regex=$1
    shift
    try sb "$@"
    expect_eq "$RC" 125 "confine $* ($(last))"
    expect_match "$ERRS" '^confine: [^'$'\n'']+$' "confine $*: one line on stderr"
    expect_match "$ERRS" "$regex" "confine $*: the reason"
}

# Every file below DIR with its hash (a removal outside the store would change it).
sums() { (cd "$1" && find . -type f -exec sha256sum {} + | sort); }

scenario() {
    mkdir -p "$WS/src/deep"
    echo start >"$WS/a.txt"
    head -c 200000 /dev/urandom >"$WS/src/blob"
    cp "$WS/src/blob" "$V/blob"
    mkfifo "$WS/pipe"  # never saved
    as_user "$WS"
    # What every checkpoint holds besides a.txt (the probe's copy too), for the sizes listed.
    local others nfiles
    others=$(find "$WS" -type f ! -name a.txt -printf '%s\n' | awk '{ n += $1 } END { print n }')
    nfiles=$(find "$WS" -type f | wc -l)

    local ids=() word
    OPTS=(--checkpoint)
    for word in one two three; do
        sandbox /bin/sh -c "echo $word >a.txt"
        expect_eq "$RC" 0 "run $word ($(last))"
        ids+=("$(checkpoint_id "$ERRS")")
    done
    sandbox /bin/sh -c "echo \"it's\" >b.txt; rm pipe"
    expect_eq "$RC" 0 "the run that deletes the FIFO ($(last))"
    ids+=("$(checkpoint_id "$ERRS")")
    [[ -n ${ids[3]} && ${ids[3]} != "${ids[0]}" ]] || fail "four checkpoints expected: ${ids[*]}"

    # list from a subdirectory, without -w.
    cd "$WS/src/deep"
    try sb checkpoints list
    cd /
    expect_eq "$RC" 0 "list from a subdirectory ($(last))"
    expect_match "$OUT" "^checkpoints of $WS, newest first" "list from a subdirectory finds the workspace"
    for word in one two three; do
        expect_match "$OUT" "before: /bin/sh -c 'echo $word >a.txt'" "the command checkpoint $word preceded"
    done
    expect_match "$OUT" "before: /bin/sh -c 'echo \"it'\\\\''s\" >b.txt; rm pipe'" "a command with a quote, as typed"
    expect_match "$OUT" "  ${ids[3]}  ${ids[3]:0:4}-${ids[3]:4:2}-${ids[3]:6:2} ${ids[3]:9:2}:${ids[3]:11:2}:${ids[3]:13:2} UTC  [0-9.]+ [KM]iB in $nfiles files, " \
        "the newest checkpoint's time and size"
    local store
    store=$(sed -n 's/.*(store \(.*\)):$/\1/p' <<<"$OUT")
    [[ -d $store/${ids[0]} ]] || fail "no store directory $store/${ids[0]} (list said: $OUT)"

    # --json, judged against the host.
    cd "$WS/src"
    try sb checkpoints list --json
    cd /
    expect_eq "$RC" 0 "list --json ($(last))"
    printf '%s' "$OUT" >"$V/list.json"
    try python3 - "$WS" "$store" "$V/list.json" "$others" "$nfiles" "${ids[@]}" <<'EOF'
import json, sys
ws, store, listed, others, nfiles, ids = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6:]
j = json.load(open(listed))
assert j["workspace"] == ws and j["store"] == store, j
got = j["checkpoints"]
assert [c["id"] for c in got] == ids[::-1], [c["id"] for c in got]
# Each holds the blob and a.txt as the run before it left it.
for c, word, before in zip(got[1:], ["three", "two", "one"], ["two\n", "one\n", "start\n"]):
    assert c["command"] == ["/bin/sh", "-c", f"echo {word} >a.txt"], c["command"]
    assert c["bytes"] == others + len(before) and c["files"] == nfiles, c
    assert [n["path"] for n in c["not_saved"]] == ["pipe"], c["not_saved"]
assert got[0]["command"][2] == "echo \"it's\" >b.txt; rm pipe", got[0]
i = got[0]["id"]
assert got[0]["time"] == f"{i[0:4]}-{i[4:6]}-{i[6:8]}T{i[9:11]}:{i[11:13]}:{i[13:15]}Z", got[0]["time"]
EOF
    expect_eq "$RC" 0 "the JSON agrees with the host ($(last))"

    # restore names the file it cannot bring back, with -q too.
    [[ ! -e $WS/pipe ]] || fail "the run did not delete the FIFO (the test proves nothing)"
    cd "$WS/src/deep"
    try sb checkpoints restore "${ids[3]}"
    cd /
    expect_eq "$RC" 0 "restore from a subdirectory ($(last))"
    expect_match "$ERRS" "confine: warning: not brought back: pipe is gone and checkpoint ${ids[3]} did not save it \\(a FIFO" \
        "restore names the file it cannot bring back"
    expect_match "$ERRS" "confine: restored checkpoint ${ids[3]} into $WS, but for the 1 file named above" "what restore says"
    [[ ! -e $WS/b.txt ]] || fail "the restore left b.txt"
    try sb -q checkpoints restore -w "$WS" "${ids[3]}"
    expect_eq "$RC" 0 "restore -q ($(last))"
    expect_match "$ERRS" "not brought back: pipe" "-q keeps the warning about data not saved"

    # Attacks on the store: nothing outside it is removed.
    mkdir -p "$store/../x" "$V/victim"
    echo canary >"$store/../x/file"
    echo canary >"$V/victim/file"
    as_user "$V/victim"
    local outside before_store
    outside=$(sums "$store/../x"; sums "$V/victim")
    before_store=$(sums "$store")
    local bad
    for bad in ../x .. . "$V/victim" /etc state manifest ".new-1" "${ids[0]}/.." "${ids[0]}/tree" "${ids[0]}x" ""; do
        refused "checkpoints rm: (\`.*\` is not a checkpoint id|no checkpoint)" checkpoints rm -w "$WS" "$bad"
    done
    refused "checkpoints rm: no checkpoint \`20000101T000000Z\` of $WS" checkpoints rm -w "$WS" 20000101T000000Z
    expect_eq "$(sums "$store/../x"; sums "$V/victim")" "$outside" "the files beside the store after the refused removals"
    expect_eq "$(sums "$store")" "$before_store" "the store after the refused removals"
    for bad in abc -1 1.5 " 2" 99999999999; do
        refused "checkpoints prune: --keep|--keep" checkpoints prune -w "$WS" --keep "$bad"
    done
    expect_eq "$(sums "$store")" "$before_store" "the store after the refused prunes"

    # rm: one checkpoint gone, the files it shared whole in the others.
    try sb checkpoints rm -w "$WS" "${ids[0]}"
    expect_eq "$RC" 0 "rm ${ids[0]} ($(last))"
    expect_match "$ERRS" "^confine: removed checkpoint ${ids[0]} of $WS\$" "what rm says"
    [[ ! -e $store/${ids[0]} ]] || fail "checkpoint ${ids[0]} is still in the store"
    try sb checkpoints list -w "$WS"
    expect_no_match "$OUT" "  ${ids[0]}  " "list after rm"
    host rm "$WS/src/blob"
    try sb checkpoints restore -w "$WS" --force "${ids[1]}"
    expect_eq "$RC" 0 "restore ${ids[1]} after rm ${ids[0]} ($(last))"
    cmp -s "$WS/src/blob" "$V/blob" || fail "the blob shared with the removed checkpoint is not whole"
    expect_eq "$(cat "$WS/a.txt")" one "a.txt from ${ids[1]}"

    # What a save or removal cut short leaves: its working directory, named by its process. prune sweeps those
    # whose process is gone (a pid no process can have) and leaves one whose process still runs.
    local dead
    dead=$(cat /proc/sys/kernel/pid_max)
    host_bg sleep 600
    host mkdir -p "$store/.new-$dead/tree/src" "$store/.removing-$dead-${ids[0]}/tree" "$store/.new-$BG_PID"
    host cp "$V/blob" "$store/.new-$dead/tree/src/blob"
    try sb checkpoints list -w "$WS"
    expect_match "$OUT" "left by an interrupted save or removal: 2 directories \\(confine checkpoints prune -w $WS removes them\\)" \
        "list names the leftovers"

    # prune.
    try sb checkpoints prune -w "$WS" --keep 1
    expect_eq "$RC" 0 "prune --keep 1 ($(last))"
    expect_match "$ERRS" "^confine: removed 2 checkpoints of $WS, kept 1; removed 2 left by an interrupted save or removal\$" \
        "what prune says"
    [[ ! -e $store/.new-$dead && ! -e $store/.removing-$dead-${ids[0]} ]] || fail "prune left the leftovers: $(ls -a "$store")"
    [[ -d $store/.new-$BG_PID ]] || fail "prune removed the working directory of a process still running"
    kill "$BG_PID"
    host rmdir "$store/.new-$BG_PID"
    [[ -d $store/${ids[3]} && ! -e $store/${ids[1]} && ! -e $store/${ids[2]} ]] || fail "prune --keep 1 kept: $(ls "$store")"
    try sb checkpoints prune -w "$WS"
    expect_eq "$RC" 0 "prune, the default keep ($(last))"
    expect_match "$ERRS" "removed 0 checkpoints of $WS, kept 1" "prune with fewer than the default"
    try sb checkpoints prune -w "$WS" --keep 0
    expect_eq "$RC" 0 "prune --keep 0 ($(last))"
    try sb checkpoints list -w "$WS"
    expect_match "$OUT" "^no checkpoints of $WS" "list after prune --keep 0"
    expect_eq "$(sums "$store/../x"; sums "$V/victim")" "$outside" "the files beside the store after rm and prune"
    refused "checkpoints rm: no checkpoints of $WS" checkpoints rm -w "$WS" latest
}
run_variants scenario
