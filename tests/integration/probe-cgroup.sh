#!/bin/bash
# probe-cgroup: `confine probe` reports which cgroup controllers the limits can use here (memory for --memory, pids
# for --pids, cpu for --cpus), not merely that cgroup v2 is mounted: a hybrid host mounts cgroup2 with none of
# them in it. What probe calls usable is what a run gets (--memory and --pids run; missing, they exit 125), a
# controller absent from the cgroup2 root's cgroup.controllers is never called usable, and the table and --json
# say the same. Nothing here writes to a cgroup hierarchy.
. "$(dirname "$0")/lib.sh"

scenario() {
    try sb probe --json
    expect_eq "$RC" 0 "probe --json ($(last))"
    local json=$OUT
    # The kernel's own view, read only: the controllers in the cgroup2 root (none if it is not mounted).
    local root offered=''
    root=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
        /proc/self/mountinfo | head -n 1)
    [[ -z $root ]] || offered=$(<"$root/cgroup.controllers")
    local usable missing status
    read -r status usable missing < <(python3 -c '
import json, sys
row = json.loads(sys.argv[1])["cgroup-v2"]
c = row["controllers"]
assert sorted(c["usable"] + c["missing"]) == ["cpu", "memory", "pids"], c
want = "yes" if not c["missing"] else "no" if not c["usable"] else "partial"
assert row["status"] == want, (row["status"], want)
offered = sys.argv[2].split()
wrong = [x for x in c["usable"] if x not in offered]
assert not wrong, f"called usable but not in the cgroup2 root: {wrong}"
print(row["status"], ",".join(c["usable"]) or "-", ",".join(c["missing"]) or "-")' "$json" "$offered") ||
        fail "probe --json: the cgroup-v2 row ($json)"

    # The table says the same, in words.
    try sb probe
    expect_eq "$RC" 0 "probe ($(last))"
    local line
    line=$(grep '^cgroup-v2 ' <<<"$OUT") || fail "probe: no cgroup-v2 line ($OUT)"
    expect_match "$line" "^cgroup-v2 +$status " "probe: the table's status is --json's"
    if [[ $usable == - ]]; then
        expect_match "$line" 'controllers usable: none;' "probe: nothing usable"
    else
        expect_match "$line" "controllers usable: ${usable//,/, }(;|$)" "probe: the usable controllers"
    fi
    if [[ $missing != - ]]; then
        expect_match "$line" "; missing: ${missing//,/, } \\(.+\\), so a limit that needs one .* exits 125" \
            "probe: the missing controllers, why, and what that costs"
    fi

    # A hybrid host (memory and pids bound to cgroup v1, as on the machine this was written on) is not "yes".
    if [[ -n $root && ! " $offered " =~ " memory " ]]; then
        expect_match "$line" '^cgroup-v2 +(no|partial) ' "probe: cgroup2 without the memory controller"
        expect_match "$missing" memory "probe: memory is missing"
    fi

    # What probe says is what a run gets.
    local controller flag
    for controller in memory pids; do
        flag=(--memory 64m)
        [[ $controller == pids ]] && flag=(--pids 100)
        try sb -w "$WS" "${flag[@]}" -- true
        if [[ ,$usable, == *,$controller,* ]]; then
            expect_eq "$RC" 0 "probe calls $controller usable: ${flag[*]} must run ($(last))"
        else
            expect_eq "$RC" 125 "probe calls $controller missing: ${flag[*]} must be refused ($(last))"
            expect_match "$ERRS" "$controller" "the refusal of ${flag[*]} names the controller"
        fi
    done
}
run_variants scenario
