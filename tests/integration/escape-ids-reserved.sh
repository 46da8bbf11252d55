#!/bin/bash
# escape-ids-reserved: 4294967295 is the kernel's "no id" ((uid_t)-1): setresuid(-1, ...) leaves root's uid as it
# is, and a user namespace's map refuses it. --user 4294967295 (or as the gid) is refused before anything runs, in
# every mode: default, --best-effort, fallback (--no-namespaces, and user namespaces refused), `confine run -u` and
# an OCI bundle's process.user. Judged on the host: the command would have created a file in the workspace, and
# confine exits 125 with one line naming the id. Controls: the same runs with uid 0 do create the file.
. "$(dirname "$0")/lib.sh"

# refused ID WHAT CONFINE-ARGS...: confine exits 125, one line on stderr naming ID, and $WS/ran is not made.
refused() {
    local id=$1 what=$2
    shift 2
    rm -f "$WS/ran"
    try sb "$@"
    expect_eq "$RC" 125 "$what: exit status ($(last))"
    expect_match "$ERRS" "$id" "$what: the error names the id"
    expect_eq "$(wc -l <<<"$ERRS")" 1 "$what: one line on stderr ($(last))"
    [[ ! -e $WS/ran ]] || fail "$what: the command ran (it wrote $WS/ran as $(stat -c %u:%g "$WS/ran"))"
}

# ran WHAT CONFINE-ARGS...: the control: the command runs and writes $WS/ran.
ran() {
    local what=$1
    shift
    rm -f "$WS/ran"
    try sb "$@"
    expect_eq "$RC" 0 "$what: exit status ($(last))"
    [[ -e $WS/ran ]] || fail "$what: the command did not run"
}

scenario() {
    local write=("$PIN" write "$WS/ran") spec
    for spec in 4294967295 0:4294967295 4294967295:0 4294967296 -1; do
        refused "$spec" "--user $spec" -w "$WS" --user "$spec" -- "${write[@]}"
        refused "$spec" "--best-effort --user $spec" -w "$WS" --best-effort --user "$spec" -- "${write[@]}"
        refused "$spec" "--no-namespaces --best-effort --user $spec" -w "$WS" --no-namespaces --best-effort --user "$spec" -- "${write[@]}"
        XENV=(CONFINE_TEST_FEATURES=userns=0)
        refused "$spec" "user namespaces refused, --best-effort --user $spec" -w "$WS" --best-effort --user "$spec" -- "${write[@]}"
        XENV=()
        refused "$spec" "confine run -u $spec" run -u "$spec" -v "$WS:$WS" host "${write[@]}"
    done
    ran "--user 0:0" -w "$WS" --user 0:0 -- "${write[@]}"
    ran "confine run -u 0:0" run -u 0:0 -v "$WS:$WS" host "${write[@]}"
    if [[ $VARIANT == root ]]; then
        ran "--no-namespaces --best-effort --user 0:0" -w "$WS" --no-namespaces --best-effort --user 0:0 -- "${write[@]}"
    fi

    # An OCI bundle whose process.user holds the reserved id, as uid and as gid.
    local bundle=$V/bundle
    mkdir -p "$bundle/rootfs/bin" "$bundle/rootfs/ws"
    cp "$PROBE" "$bundle/rootfs/bin/probe"
    chown -R "$VUID:$VGID" "$bundle"
    for spec in '"uid": 4294967295, "gid": 0' '"uid": 0, "gid": 4294967295'; do
        printf '{"process": {"user": {%s}, "args": ["/bin/probe", "write", "/ws/ran"]}}\n' "$spec" >"$bundle/config.json"
        refused 4294967295 "a bundle with $spec" run -v "$WS:/ws" "$bundle"
    done
    printf '{"process": {"user": {"uid": 0, "gid": 0}, "args": ["/bin/probe", "write", "/ws/ran"]}}\n' >"$bundle/config.json"
    ran "a bundle with uid 0" run -v "$WS:/ws" "$bundle"
}
run_variants scenario
