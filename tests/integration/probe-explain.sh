#!/bin/bash
# probe-explain: `confine probe --json` is JSON with the keys landlock, seccomp and user-namespaces;
# `confine explain -- true` exits 0 and lists the promises ("promises" section, "kept"); `confine explain
# --json -- true` is JSON with a "promises" array.  Nothing is run by explain.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

scenario() {
    local marker=$WS/ran
    try sb probe --json
    expect_eq "$RC" 0 "confine probe --json: exit status ($(last))"
    python3 -c 'import json, sys
d = json.loads(sys.argv[1])
missing = [k for k in ("landlock", "seccomp", "user-namespaces") if k not in d]
assert not missing, f"missing keys {missing} in {sorted(d)}"' "$OUT" || fail "confine probe --json: $(last)"

    try sb probe
    expect_eq "$RC" 0 "confine probe: exit status ($(last))"
    expect_match "$OUT" "landlock" "confine probe: the table"

    try sb explain -w "$WS" -- /bin/touch "$marker"
    expect_eq "$RC" 0 "confine explain: exit status ($(last))"
    expect_match "$OUT" "(^|"$'\n'")promises" "confine explain: a promises section"
    expect_match "$OUT" "kept" "confine explain: kept promises"
    [[ ! -e $marker ]] || fail "confine explain ran the command"

    try sb explain -w "$WS" --json -- /bin/touch "$marker"
    expect_eq "$RC" 0 "confine explain --json: exit status ($(last))"
    python3 -c 'import json, sys
d = json.loads(sys.argv[1])
p = d.get("promises")
assert isinstance(p, list) and p, f"promises: {p!r}"
assert all("text" in x and "kept" in x for x in p), p' "$OUT" || fail "confine explain --json: $(last)"
    [[ ! -e $marker ]] || fail "confine explain --json ran the command"

    # In fallback mode explain lists what is not kept.
    try sb explain -w "$WS" --no-namespaces --best-effort --json -- /bin/true
    expect_eq "$RC" 0 "confine explain --no-namespaces --json: exit status ($(last))"
    python3 -c 'import json, sys
d = json.loads(sys.argv[1])
assert d.get("mode") == "fallback", d.get("mode")
assert any(x.get("requested", True) and not x["kept"] for x in d["promises"]), "nothing lost in fallback mode"' "$OUT" ||
        fail "confine explain --no-namespaces --json: $(last)"
    # Host processes and their command lines: hidden by the pid namespace, listed as lost without one.
    try sb explain -w "$WS" --no-namespaces --best-effort -- /bin/true
    expect_match "$OUT" $'LOST  host processes and their command lines are hidden\n +needs a pid namespace' "explain in fallback mode"
    try sb explain -w "$WS" -- /bin/true
    expect_match "$OUT" $'kept  host processes and their command lines are hidden\n +by pid namespace' "explain in full mode"

    # explain changes nothing on the host: no scan cache, no hooks directory, no profile directory, however
    # verbose; the run it describes makes each of them (the control).
    mkdir -m 0755 "$WS/.git"
    chown "$VUID:$VGID" "$WS/.git"
    XENV=(XDG_CACHE_HOME="$H/cache")
    try sb -v explain -w "$WS" --profile aider -- /bin/true
    expect_eq "$RC" 0 "explain -v with a repository without hooks and a profile's directories ($(last))"
    expect_match "$OUT" "make the missing directories" "explain -v lists what a run would make"
    local made=() path
    for path in "$H/cache" "$WS/.git/hooks" "$H/.aider"; do [[ ! -e $path ]] || made+=("$path"); done
    expect_eq "${made[*]}" "" "what explain made"
    try sb -w "$WS" --profile aider -- /bin/true
    expect_eq "$RC" 0 "the run explain described ($(last))"
    [[ -d $H/cache/confine/scan && -d $WS/.git/hooks && -d $H/.aider/caches ]] ||
        fail "the run made no scan cache, hooks directory or profile directory"
    XENV=()
}
run_variants scenario
