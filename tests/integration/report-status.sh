#!/bin/bash
# report-status: --status-fd N and --report FILE each write one JSON line once the command runs: in full mode
# "mode":"full" with layers including "seccomp" and "landlock-abi-<the probe's ABI>" and nothing lost; in
# fallback mode "mode":"fallback" and a non-empty "lost" list.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

# check_status_line FILE WHAT MODE: FILE holds exactly one JSON line of that mode.
check_status_line() {
    local file=$1 what=$2 mode=$3 text
    [[ -s $file ]] || fail "$what: $file is empty or missing"
    text=$(<"$file")
    expect_eq "$(wc -l <"$file")" 1 "$what: number of lines"
    python3 - "$text" "$mode" "$ABI" "$what" <<'PY' || fail "$what: $text"
import json, sys
text, mode, abi, what = sys.argv[1:]
d = json.loads(text)
problems = []
if d.get("mode") != mode: problems.append(f"mode {d.get('mode')!r}, expected {mode!r}")
layers = d.get("layers", [])
for want in ("seccomp", f"landlock-abi-{abi}", "no-new-privs"):
    if want not in layers: problems.append(f"layers {layers} lack {want!r}")
if str(d.get("landlock_abi")) != abi: problems.append(f"landlock_abi {d.get('landlock_abi')!r}, expected {abi}")
if mode == "full":
    for want in ("user-namespace", "mount-namespace", "pid-namespace", "network-namespace"):
        if want not in layers: problems.append(f"layers {layers} lack {want!r}")
    if d.get("lost") != []: problems.append(f"lost {d.get('lost')!r}, expected []")
else:
    if any(l.endswith("-namespace") for l in layers): problems.append(f"namespace layers in fallback mode: {layers}")
    lost = d.get("lost")
    if not isinstance(lost, list) or not lost or not all(isinstance(x, str) and x for x in lost):
        problems.append(f"lost {lost!r}, expected a non-empty list of strings")
if problems:
    print(f"{what}: " + "; ".join(problems), file=sys.stderr)
    sys.exit(1)
PY
}

scenario() {
    local out=$V/out
    mkdir -m 0755 "$out"
    chown "$VUID:$VGID" "$out"

    OPTS=(--status-fd 3 --report "$out/full.json")
    try sb -w "$WS" "${OPTS[@]}" -- /bin/true 3>"$out/full-fd.json"
    expect_eq "$RC" 0 "full mode run ($(last))"
    check_status_line "$out/full-fd.json" "--status-fd 3 (full)" full
    check_status_line "$out/full.json" "--report (full)" full
    cmp -s "$out/full-fd.json" "$out/full.json" || fail "--status-fd and --report differ: $(cat "$out/full-fd.json" "$out/full.json")"

    OPTS=(--no-namespaces --best-effort -q --status-fd 3 --report "$out/fallback.json")
    try sb -w "$WS" "${OPTS[@]}" -- /bin/true 3>"$out/fallback-fd.json"
    expect_eq "$RC" 0 "fallback mode run ($(last))"
    check_status_line "$out/fallback-fd.json" "--status-fd 3 (fallback)" fallback
    check_status_line "$out/fallback.json" "--report (fallback)" fallback
}

# The Landlock ABI as `confine probe --json` reports it ("abi 7").
ABI=$("$CONFINE" probe --json | python3 -c 'import json, re, sys
print(re.search(r"\d+", json.load(sys.stdin)["landlock"]["status"]).group(0))')
[[ $ABI =~ ^[0-9]+$ && $ABI -gt 0 ]] || skip "no Landlock on this kernel (confine probe: $ABI)"
run_variants scenario
