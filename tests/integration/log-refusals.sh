#!/bin/bash
# log-refusals: what confine refuses the command is told to its user and to the command itself, and the command
# cannot falsify it. From inside, each kind of refusal is triggered; on the host, --log holds one JSON line each
# (checked field by field, parsed, never grepped whole) with the errno the call saw inside, its pid inside and its
# process name: seccomp refusals of the built-in policy (new-namespaces, kernel-attack-surface, setuid-files with
# the mode argument, io-uring with ENOSYS) and of a --seccomp policy (ptrace); the proxy's refusals (a CONNECT and
# a GET to a name not allowed, a name the DNS stub refuses, an allowed name that resolves to an internal address),
# whose 403 names the flag; the limits (killed at --memory, forks refused at --pids) where this machine has a
# cgroup v2 with those controllers. The exit summary counts them, -q prints none, --report holds the same counts.
# Inside, $CONFINE_DENIALS (/run/confine/denials.jsonl) holds the same lines as --log, already when the refused
# call returns, and cannot be written, truncated, chmod'ed, removed or replaced. A loop of refused calls stops the
# lines at 100000 with one line saying so (the counts go on), the run ends normally and the end of the run adds a
# line of what was dropped; a forged line (written to the file, or smuggled in a process name) never reaches the
# host's --log. (log-bounded: the lines' length and the byte cap.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

DENIALS=/run/confine/denials.jsonl
COMM=confine-test-pr  # the probe's process name, as the kernel keeps it (15 bytes)

# log_query FILE WHERE FIELDS: checks that every line of FILE is one JSON object whose fields come in the documented
# order (time, layer, action, what, the layer's own, allow_with last), then prints, for each line where the Python
# expression WHERE holds (r: the line), the Python expression FIELDS (a tuple) joined by '|' (strings as they are,
# anything else as JSON). confine's lines about the file's cap ("event" and no "layer") are not refusals: skipped.
LOG_QUERY='
import json, sys
path, where, fields = sys.argv[1:4]
LAYER_FIELDS = {
    "seccomp": ["syscall", "errno", "rule", "args", "pid", "comm"],
    "network": ["method", "host", "port", "refusal", "reason"],
}
data = open(path, "rb").read()
assert data == b"" or data.endswith(b"\n"), f"{path}: the last line is not whole"
for n, raw in enumerate(data.split(b"\n")[:-1], 1):
    r = json.loads(raw.decode("utf-8"))
    if "layer" not in r and r.get("event") in ("log_cap_reached", "log_dropped"):
        continue
    keys = list(r)
    assert keys[:4] == ["time", "layer", "action", "what"], f"line {n}: fields {keys}"
    assert isinstance(r["time"], int) and r["action"] in ("refused", "failed", "killed", "neutralised"), f"line {n}: {r}"
    rest = keys[4:-1] if keys[-1] == "allow_with" else keys[4:]
    if r["layer"] in LAYER_FIELDS:
        assert rest == LAYER_FIELDS[r["layer"]], f"line {n}: the layer fields {rest}"
    if eval(where):
        print("|".join(v if isinstance(v, str) else json.dumps(v, sort_keys=True) for v in eval(fields)))
'
log_query() { /usr/bin/python3 -c "$LOG_QUERY" "$@"; }

# report_refusals FILE: the --report file's "event":"refusals" line, its layers' totals and names, sorted.
report_refusals() {
    /usr/bin/python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
r = [l for l in lines if l.get("event") == "refusals"]
assert len(r) == 1, lines
r = r[0]
print("total", r["total"])
for layer in sorted(k for k in r if k not in ("event", "total")):
    print(layer, r[layer]["total"], json.dumps(r[layer]["by_name"], sort_keys=True))' "$1"
}

now_ms() { date +%s%3N; }

# One probe command per process, each printing "PID RESULT": the pid the sandbox gave it, and what it got.
write_each_script() {
    cat >"$WS/.probe/each.sh" <<'EOF'
probe=$1
shift
for c in "$@"; do
    # shellcheck disable=SC2086 # $1 is split on purpose: VERB ARGS
    sh -c 'printf "%s " "$$"; exec "$0" $1' "$probe" "$c"
done
exit 0
EOF
}

seccomp_refusals() {
    local t0 t1 pids=() results=() line got want
    OPTS=(--log "$LOG" --report "$REPORT")
    t0=$(now_ms)
    sandbox sh "$WS/.probe/each.sh" "$PIN" "syscall unshare CLONE_NEWUSER" "syscall bpf" \
        "set-mode chmod $WS/suid-file 4755" "syscall io_uring_setup" "syscall clone3"
    t1=$(now_ms)
    expect_eq "$RC" 0 "seccomp refusals: the run ($(last))"
    while read -r line; do
        pids+=("${line%% *}")
        results+=("${line#* }")
    done <<<"$OUT"
    # As the calls saw them inside.
    expect_eq "${results[*]}" "EPERM EPERM EPERM ENOSYS ENOSYS" "errnos inside ($(last))"
    # On the host: the setuid bit never reached the file.
    expect_eq "$(stat -c %a "$WS/suid-file")" 644 "the workspace file's mode on the host"

    got=$(log_query "$LOG" 'r["layer"] == "seccomp"' \
        '(r["action"], r["what"], r["syscall"], r["errno"], r["rule"], r["args"], str(r["pid"]), r["comm"], r.get("allow_with", "-"))')
    want="refused|unshare|unshare|EPERM|new-namespaces|{\"arg0\": \"0x10000000\"}|${pids[0]}|$COMM|--allow-nested
refused|bpf|bpf|EPERM|kernel-attack-surface|{}|${pids[1]}|$COMM|-
refused|chmod|chmod|EPERM|setuid-files|{\"arg1\": \"0x9ed\"}|${pids[2]}|$COMM|-"
    # ENOSYS answers (io_uring, clone3: "no such call here", and the caller falls back) are the kernel's own:
    # never recorded, counted or warned about.
    expect_eq "$got" "$want" "--log: the seccomp lines"
    got=$(log_query "$LOG" "not $t0 <= r[\"time\"] <= $t1" 'r["what"],')
    expect_eq "$got" "" "--log: times (ms since the epoch) within the run"

    # The exit summary counts them, and --report holds the same counts.
    want="confine: warning: refused: syscalls bpf ×1, chmod ×1, unshare ×1 (each one, and why: $LOG)"
    expect_eq "$(grep -c 'refused:' <<<"$ERRS")" 1 "one summary line ($(last))"
    expect_eq "$(grep -Fxc "$want" <<<"$ERRS")" 1 "the summary line: want '$want' ($(last))"
    expect_eq "$(report_refusals "$REPORT")" 'total 3
seccomp 3 {"bpf": 1, "chmod": 1, "unshare": 1}' "--report: the refusals line"

    # -q: no summary, and still every line in --log (appended to the three above).
    OPTS=(-q --log "$LOG")
    sandbox sh "$WS/.probe/each.sh" "$PIN" "syscall bpf" "syscall bpf"
    expect_eq "$RC:$ERRS" "0:" "-q: nothing on stderr ($(last))"
    expect_eq "$(log_query "$LOG" 'r["layer"] == "seccomp"' 'r["what"],' | sort | uniq -c | tr -s ' ')" \
        ' 3 bpf
 1 chmod
 1 unshare' "-q: --log still gets the lines"
}

custom_policy_refusals() {
    cat >"$V/no-ptrace.toml" <<'EOF'
format = "confine-seccomp/1"
default = "allow"

[[rule]]
group = "test-ptrace"
why = "the integration test refuses ptrace"
action = "errno:EPERM"
syscalls = [
  "ptrace",
]
EOF
    local log=$LOGDIR/custom.jsonl got
    OPTS=(--log "$log" --seccomp "$V/no-ptrace.toml")
    sandbox sh "$WS/.probe/each.sh" "$PIN" "ptrace 1" "syscall bpf"
    expect_eq "$RC" 0 "--seccomp: the run ($(last))"
    local pid=${OUT%% *} results
    results=$(cut -d' ' -f2 <<<"$OUT" | tr '\n' ' ')
    expect_eq "$results" "EPERM EPERM " "--seccomp: ptrace refused by the policy, bpf by confine's floor ($(last))"
    got=$(log_query "$log" True '(r["layer"], r["syscall"], r["errno"], r["rule"], r["args"], str(r["pid"]), r["comm"], r.get("allow_with", "-"))')
    # The floor's own refusals are not recorded under a --seccomp policy (REFUSALS in man/confine.1).
    expect_eq "$got" "seccomp|ptrace|EPERM|test-ptrace|{}|$pid|$COMM|-" "--seccomp: --log names the policy's rule"
}

# The command reads $CONFINE_DENIALS: the line of a call it was refused is there as soon as the call returns; and it
# cannot change the file.
sandbox_file() {
    local log=$LOGDIR/tamper.jsonl
    OPTS=(--log "$log")
    cat >"$WS/.probe/tamper.py" <<'EOF'
import errno, os, sys
p = os.environ["CONFINE_DENIALS"]
print(p)
def attempt(name, f):
    try:
        f()
        print(name, "OK")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
forged = sys.argv[1] + "/forged.jsonl"
with open(forged, "w") as f:
    f.write('{"time":1,"layer":"seccomp","action":"refused","what":"forged"}\n')
attempt("write", lambda: os.write(os.open(p, os.O_WRONLY | os.O_APPEND), b'{"what":"forged"}\n'))
attempt("truncate", lambda: os.truncate(p, 0))
attempt("open-trunc", lambda: os.open(p, os.O_WRONLY | os.O_TRUNC))
attempt("chmod", lambda: os.chmod(p, 0o666))
attempt("unlink", lambda: os.unlink(p))
attempt("rename-over", lambda: os.rename(forged, p))
attempt("rename-away", lambda: os.rename(p, sys.argv[1] + "/moved"))
attempt("rename-dir", lambda: os.rename(os.path.dirname(p), sys.argv[1] + "/moved-dir"))
EOF
    sandbox sh -c "\"\$0\" repeat-logged 200 \"\$CONFINE_DENIALS\" unshare CLONE_NEWUSER &&
        /usr/bin/python3 \"\$1\" \"\$2\" && cat \"\$CONFINE_DENIALS\"" "$PIN" "$WS/.probe/tamper.py" "$WS"
    expect_eq "$RC" 0 "the sandbox's denial log: the run ($(last))"
    local head
    head=$(sed -n 1,10p <<<"$OUT")
    # Every refused call's line is in the file by the time the call has returned.
    expect_eq "$head" "OK 200 EPERM unseen=0
$DENIALS
write EACCES
truncate EACCES
open-trunc EROFS
chmod EROFS
unlink EBUSY
rename-over EXDEV
rename-away EXDEV
rename-dir EXDEV" "inside: \$CONFINE_DENIALS, each line seen at once, and each attempt to change the file (stderr: $ERRS)"
    # What it holds afterwards: the 200 lines confine wrote, and nothing of the sandbox's.
    sed -n '11,$p' <<<"$OUT" >"$V/inside.jsonl"
    expect_eq "$(log_query "$V/inside.jsonl" True 'r["what"], r["errno"], r["comm"]' | sort | uniq -c | tr -s ' ')" \
        " 200 unshare|EPERM|$COMM" "inside: the file afterwards"
    # The host's --log: the same lines, none of the sandbox's.
    cmp -s "$V/inside.jsonl" "$log" || fail "--log differs from what the sandbox read in its file"

    # Without --log, the sandbox has its file all the same.
    OPTS=()
    sandbox sh -c '"$0" syscall bpf; cat "$CONFINE_DENIALS"' "$PIN"
    expect_eq "$RC:${OUT%%$'\n'*}" "0:EPERM" "without --log: the run ($(last))"
    expect_eq "$(log_query /dev/stdin True 'r["what"], r["errno"]' <<<"${OUT#*$'\n'}")" "bpf|EPERM" \
        "without --log: the sandbox's file"
}

# A loop of refused calls: the lines stop at 100000 and one saying so, the counts do not, the run ends as usual,
# and the end of the run adds a line of what was dropped.
flood() {
    local log=$LOGDIR/flood.jsonl report=$LOGDIR/flood-report.json n=100100
    OPTS=(--log "$log" --report "$report")
    sandbox sh -c '"$0" repeat '$n' bpf && wc -l <"$CONFINE_DENIALS" && tail -n 1 "$CONFINE_DENIALS"' "$PIN"
    expect_eq "$RC:$(sed 's/"time":[0-9]*/"time":T/' <<<"$OUT")" '0:OK '$n' EPERM
100001
{"time":T,"event":"log_cap_reached","cap":"lines","max_lines":100000,"max_bytes":33554432}' \
        "flood: the run ends, the sandbox's file stops at 100000 lines and the cap's ($(last))"
    expect_eq "$(log_query "$log" True 'r["what"],' | sort | uniq -c | tr -s ' ')" " 100000 bpf" \
        "flood: --log stops at 100000 whole lines"
    expect_eq "$(tail -n 2 "$log" | sed 's/"time":[0-9]*/"time":T/')" '{"time":T,"event":"log_cap_reached","cap":"lines","max_lines":100000,"max_bytes":33554432}
{"time":T,"event":"log_dropped","lines":100,"bytes":'"$((100 * $(head -n 1 "$log" | wc -c)))"'}' \
        "flood: --log says where the cap was reached, and at the end what it dropped"
    expect_match "$ERRS" "confine: warning: --log: 100 lines \\([0-9.]+ KiB\\) not written, past the cap of 100000 lines or 32\\.0 MiB per run" \
        "flood: stderr says so ($(last))"
    expect_eq "$(report_refusals "$report")" "total $n
seccomp $n {\"bpf\": $n}" "flood: --report counts every refusal"
    expect_eq "$(grep -Fxc "confine: warning: refused: syscalls bpf ×$n (each one, and why: $log)" <<<"$ERRS")" 1 \
        "flood: the summary counts every refusal ($(last))"
}

# A process name is the sandbox's to choose: a name that closes the JSON object and opens another, or that is not
# UTF-8, stays inside its own line's "comm".
forged_names() {
    local log=$LOGDIR/names.jsonl got
    OPTS=(--log "$log")
    sandbox sh -c '"$0" named "$1" syscall bpf; "$0" named "$2" syscall bpf' "$PIN" $'"}\n{"forged":1' $'\xff\xfeabc'
    expect_eq "$RC:$OUT" $'1:EPERM\nEPERM' "forged names: both refused ($(last))"
    got=$(log_query "$log" True 'json.dumps(r["comm"]), str(sorted(r) == sorted(set(r) - {"forged"}))')
    # The kernel shows a newline in a name as "\n" (/proc/PID/status); the bytes that are not UTF-8 are replaced.
    expect_eq "$got" '"\"}\\n{\"forged\":1"|True
"\ufffd\ufffdabc"|True' "forged names: each one a string in its own line"
}

network_refusals() {
    proxy_setup
    start_proxy_servers --http 127.0.0.1 "$WWW"
    local hp=$HTTP_0_PORT log=$LOGDIR/net.jsonl report=$LOGDIR/net-report.json got
    local allow='; to allow it: --allow'
    # A name that resolves to loopback and is not `localhost` (which names the loopback itself): this host's own.
    local me
    me=$(hostname | tr 'A-Z' 'a-z')
    [[ $(getent ahostsv4 "$me" | awk 'NR == 1 { print $1 }') == 127.0.0.1 ]] ||
        skip "this host's name ($me) does not resolve to 127.0.0.1"
    OPTS=(--net proxy --allow "$me:$hp" --log "$log" --report "$report")
    sandbox sh -c '
        /usr/bin/python3 "$0" each "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n" \
            "GET http://evil.example/x HTTP/1.1\r\nHost: evil.example\r\n\r\n" \
            "GET http://'"$me:$hp"'/hello.txt HTTP/1.1\r\nHost: '"$me:$hp"'\r\n\r\n"
        /usr/bin/python3 "$0" resolve nowhere.example' "$PC"
    expect_eq "$RC" 1 "network: the run (the name does not resolve: exit 1) ($(last))"
    local IFS=$'\n' want
    want="HTTP/1.1 403 Forbidden => confine: evil.example:443 not in the allowlist$allow evil.example:443 (a profile: [network] allow)
HTTP/1.1 403 Forbidden => confine: evil.example:80 not in the allowlist$allow evil.example:80 (a profile: [network] allow)
HTTP/1.1 403 Forbidden => confine: $me:$hp resolves to an internal address (127.0.0.1); allow it by address to reach it
gaierror: [Errno -2] Name or service not known"
    expect_eq "$OUT" "$want" "network: the answers inside name the flag ($(last))"
    unset IFS
    got=$(log_query "$log" 'r["layer"] == "network"' '(r["action"], r["what"], r["method"], r["host"], str(r["port"]), r["refusal"], r["reason"], r.get("allow_with", "-"))')
    want="refused|evil.example:443|CONNECT|evil.example|443|not_allowed|not in the allowlist|--allow evil.example:443 (a profile: [network] allow)
refused|evil.example:80|GET|evil.example|80|not_allowed|not in the allowlist|--allow evil.example:80 (a profile: [network] allow)
refused|$me:$hp|GET|$me|$hp|internal_address|resolves to an internal address (127.0.0.1); allow it by address to reach it|--allow ADDRESS:$hp for the internal address $me resolves to
refused|nowhere.example (DNS)|DNS|nowhere.example|0|not_allowed|not in the allowlist|--allow nowhere.example (a profile: [network] allow)"
    expect_eq "$got" "$want" "network: the --log lines"
    # The network's summary is the proxy's own line; the refusal counts are in --report.
    expect_no_match "$ERRS" 'refused: ' "network: no 'refused:' line for the network ($(last))"
    local counts
    counts=$(/usr/bin/python3 -c 'import json, sys; print(json.dumps({k: 1 for k in sorted(sys.argv[1:])}))' \
        evil.example:443 evil.example:80 "$me:$hp" "nowhere.example (DNS)")
    expect_eq "$(report_refusals "$report")" "total 4
network 4 $counts" \
        "network: --report counts"
}

# The limits need a cgroup v2 with the memory and pids controllers, usable by this variant's user: what
# `confine probe` calls usable is what a run gets (probe-cgroup).
limits_refusals() {
    try sb probe --json
    expect_eq "$RC" 0 "probe --json ($(last))"
    local usable
    usable=$(/usr/bin/python3 -c 'import json, sys
print(",".join(sorted(json.loads(sys.argv[1])["cgroup-v2"]["controllers"]["usable"])))' "$OUT")
    if [[ ,$usable, != *,memory,* || ,$usable, != *,pids,* ]]; then
        echo "note: not possible here: confine probe finds the cgroup v2 controllers '${usable:-none}' usable, not" \
            "memory and pids (a hybrid host binds them to cgroup v1); tests/vm checks the limits' lines (limits)"
        return 0
    fi
    local log=$LOGDIR/limits.jsonl got
    OPTS=(--log "$log" --memory 64m)
    sandbox /usr/bin/python3 -c 'b = bytearray(256 << 20); print(len(b))'
    expect_eq "$RC" 137 "--memory 64m: allocating 256 MiB is killed ($(last))"
    expect_match "$ERRS" "refused: limits reached memory ×1 \\(each one, and why: $log\\)" "--memory: the summary ($(last))"
    OPTS=(--log "$log" --pids 32)
    sandbox /usr/bin/python3 -c 'import os, time
try:
    for _ in range(200):
        if os.fork() == 0:
            time.sleep(3)
            os._exit(0)
except OSError as e:
    print(e.strerror)'
    expect_eq "$RC:$OUT" "0:Resource temporarily unavailable" "--pids 32: a fork loop stops at the limit ($(last))"
    expect_match "$ERRS" "refused: limits reached pids ×1 \\(each one, and why: $log\\)" "--pids: the summary ($(last))"
    got=$(log_query "$log" 'r["layer"] == "limits"' '(r["action"], r["what"], r["limit"], str(r.get("limit_bytes", "-")), str(r.get("max", "-")), str(r.get("forks_refused", 0) > 0), r["allow_with"])')
    expect_eq "$got" "killed|memory|memory|67108864|-|False|--memory SIZE (a profile: [limits] memory)
refused|pids|pids|-|32|True|--pids N (a profile: [limits] pids)" "limits: the --log lines"
}

scenario() {
    LOGDIR=$V/logs
    mkdir -m 0755 "$LOGDIR"
    if [[ $SUITE_UID == 0 ]]; then chown "$VUID:$VGID" "$LOGDIR"; fi
    LOG=$LOGDIR/log.jsonl
    REPORT=$LOGDIR/report.json
    write_each_script
    seccomp_refusals
    custom_policy_refusals
    sandbox_file
    forged_names
    flood
    network_refusals
    limits_refusals
}
run_variants scenario
