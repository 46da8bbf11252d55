#!/usr/bin/env bash
# startup-budget: a plain run (`confine -q -w WS -- /bin/true`, no flags) maps no more shared libraries and starts
# no more processes or threads than tests/budget/plain-run.txt allows, as root and as a user. Counted with strace,
# not timed: a run that starts paying for something it does not use (OpenSSL for a broker it has not got, a trial
# a plain host needs not) fails here on any machine.
source "$(dirname "$0")/lib.sh"

command -v strace >/dev/null || skip "strace not installed (apt-get install strace)"
budget=$TESTS_DIR/../budget/plain-run.txt
want() { awk -v k="$1" '$1 == k { print $2 }' "$budget"; }

# count LOG: "libraries processes threads" of confine's own (the first pid) and its sandbox's pid 1, before the
# command's execve; the command's own loading is not confine's.
count() {
    python3 - "$1" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
confine = lines[0].split()[0]
libs = procs = threads = 0
command = set()
for line in lines:
    pid, call = line.split(None, 1)
    if call.startswith("execve(") and pid == confine:
        libs = procs = threads = 0  # setpriv and env exec into confine: count from confine's own image
    elif call.startswith("execve("):
        command.add(pid)  # from here on this pid is the command, not confine
    if pid in command:
        continue
    if call.startswith("openat(") and ".so" in call and "ENOENT" not in call and "ld.so.cache" not in call:
        libs += 1
    m = re.match(r"(clone3?|fork|vfork)\((.*)", call)
    if m and "= -1" not in call:
        if "CLONE_THREAD" in call: threads += 1
        else: procs += 1
print(libs, procs, threads)
PY
}

scenario() {
    local log=$V/strace.log cmd=("$BIN/confine" -q -w "$WS" -- /bin/true) got
    if [[ $VARIANT == user ]]; then
        cmd=(setpriv --reuid "$VUID" --regid "$VGID" --clear-groups env HOME="$H" "${cmd[@]}")
    fi
    strace -f -qq -e trace=openat,clone,clone3,fork,vfork,execve -o "$log" "${cmd[@]}" || fail "the plain run failed"
    read -r libs procs threads <<<"$(count "$log")"
    echo "plain run: $libs libraries, $procs processes, $threads threads"
    ((libs <= $(want libraries))) || fail "confine mapped $libs shared libraries (budget $(want libraries)): $(grep '\.so' "$log" | grep -v ENOENT | head -5)"
    ((procs <= $(want processes))) || fail "confine started $procs processes (budget $(want processes))"
    ((threads <= $(want threads))) || fail "confine started $threads threads (budget $(want threads))"
}

run_variants scenario
