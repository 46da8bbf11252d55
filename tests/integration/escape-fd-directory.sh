#!/bin/bash
# escape-fd-directory: a directory fd kept with --preserve-fd is a way out of every mount: openat(fd, "../..")
# climbs to the host's `/`. confine refuses a directory fd, and an O_PATH fd (which may be a directory, or be
# reopened through /proc/self/fd), with exit 125 and one line naming the fd, before the command runs (it would
# have written a file in the workspace). Control: a regular file's fd is still passed and readable inside.
. "$(dirname "$0")/lib.sh"

# Opens PATH (as a directory, O_PATH, or a plain read-only file) on fd 7 and execs the rest: confine inherits it.
OPEN_ON_7='
import os, sys
path, kind = sys.argv[1], sys.argv[2]
flags = {"dir": os.O_RDONLY | os.O_DIRECTORY, "path": os.O_PATH, "file": os.O_RDONLY}[kind]
os.dup2(os.open(path, flags), 7, inheritable=True)
os.execv(sys.argv[3], sys.argv[3:])
'

# with_fd_7 PATH KIND CONFINE-ARGS...: confine as the variant's user, with PATH open on fd 7.
with_fd_7() {
    local path=$1 kind=$2
    shift 2
    try timeout -k 5 "$SB_TIMEOUT" "${RUN_AS[@]}" env -i "${BASE_ENV[@]}" python3 -c "$OPEN_ON_7" "$path" "$kind" "$CONF" "$@"
}

scenario() {
    local kind path
    echo "fd-content-$RANDOM" >"$V/file"
    mkdir -m 0755 "$V/dir"
    for kind in dir:"$V/dir" dir:/ path:"$V/file" path:"$V/dir"; do
        path=${kind#*:} kind=${kind%%:*}
        rm -f "$WS/ran"
        with_fd_7 "$path" "$kind" -w "$WS" --preserve-fd 7 -- "$PIN" write "$WS/ran"
        expect_eq "$RC" 125 "--preserve-fd of $kind $path: exit status ($(last))"
        expect_match "$ERRS" "--preserve-fd 7: (a directory|an O_PATH descriptor)" "--preserve-fd of $kind $path: the error"
        expect_eq "$(wc -l <<<"$ERRS")" 1 "--preserve-fd of $kind $path: one line ($(last))"
        [[ ! -e $WS/ran ]] || fail "--preserve-fd of $kind $path: the command ran"
        # --best-effort weakens layers, never this check.
        with_fd_7 "$path" "$kind" -w "$WS" --best-effort --preserve-fd 7 -- "$PIN" write "$WS/ran"
        expect_eq "$RC" 125 "--best-effort --preserve-fd of $kind $path: exit status ($(last))"
        [[ ! -e $WS/ran ]] || fail "--best-effort --preserve-fd of $kind $path: the command ran"
    done

    with_fd_7 "$V/file" file -w "$WS" --preserve-fd 7 -- "$PIN" read-fd 7
    expect_eq "$RC" 0 "--preserve-fd of a regular file still works ($(last))"
    expect_match "$OUT" "^OK [0-9]+ $(<"$V/file")\$" "--preserve-fd of a regular file: read inside"
}
run_variants scenario
