# lib.sh: sourced by every tests/integration/<area>-<behaviour>.sh script (mold's common.inc style).
#
# A test defines a scenario function and ends with `run_variants scenario`.  The scenario runs once
# per variant, each time in a fresh subshell with a fresh fake $HOME and workspace:
#   root  confine is started by root; $H and $WS are owned by root.
#   user  confine is started by uid/gid 65534 (setpriv --clear-groups), running copies of confine and
#         the probe from a world-readable temp dir; $H and $WS are owned by 65534.
# When the suite itself is not run as root, only the user variant runs (as the current user) and the
# root variant is reported as a skip.
#
# In a scenario:
#   $T      per-test temp dir (0755, removed on exit);  $V  per-variant dir;  $VARIANT  root|user
#   $H      fake home (same path inside and out): .ssh/id_rsa, .aws/credentials hold $SSH_CANARY/$AWS_CANARY
#   $WS     the workspace, owned by the variant's user;  $VUID/$VGID  the variant user's ids
#   $PIN    path of the probe inside the sandbox (a copy in $WS/.probe/)
#   OPTS=(...)  extra confine flags, XENV=(K=V ...) extra environment for confine (both reset per variant)
#   sandbox CMD...           run `confine -w $WS "${OPTS[@]}" -- CMD...` as the variant's user with a clean
#                            environment (PATH, HOME=$H, USER, LANG + XENV); sets RC, OUT, ERRS
#   probe VERB ARGS...       sandbox "$PIN" VERB ARGS...
#   expect_errno NAME VERB ARGS...   probe must fail with exactly errno NAME
#   expect_ok VERB ARGS...           probe must succeed
#   expect_refused WHAT REGEX ARGS...  confine ARGS must exit 125 with one "confine: ..." line matching REGEX
#   host CMD...              run CMD on the host as the variant's user (controls), e.g. host "$PROBE_BIN" read F
#   host_probe VERB ARGS...  try host "$PROBE_BIN" VERB ARGS...
#   host_bg CMD...           host CMD in the background; $BG_PID is CMD's own pid
#   try CMD...               run CMD, never fail; sets RC, OUT, ERRS
#   skip WHY / fail WHY / expect_eq GOT WANT [WHAT] / expect_match GOT REGEX [WHAT] / expect_no_match
#   tree_sum DIR             fingerprint of a host tree (names, sizes, modes, owners, hashes) to compare
#   start_servers ARGS...    host TCP/UDP/unix servers (host-servers.py), ports in TCP_0_PORT, UDP_0_PORT...
#   bg CMD...                start CMD in the background, killed when the variant (or test) ends; pid in $BG_PID
#   sb_bg CONFINE-ARGS...    start confine in the background as the variant's user; $BG_PID is confine's pid
#   wait_file FILE           wait (up to 20 s) until FILE exists; fails at once if $BG_PID ends first
set -eEuo pipefail
shopt -s inherit_errexit
# Files and directories the tests create must be readable by uid 65534 (the user variant).
umask 022

TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TEST_NAME=$(basename "$0" .sh)
export LC_ALL=C
# A PATH that both the host side and the sandbox can use (no per-user shims under /root or $HOME).
SANE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH=$SANE_PATH

: "${CONFINE:=$TESTS_DIR/../../build/confine}"
: "${PROBE:=$TESTS_DIR/../../build/tests/integration/confine-test-probe}"
UNPRIV_UID=65534
UNPRIV_GID=65534
VARIANT=setup

on_error() {
    local rc=$1 line=$2 cmd=$3 i
    echo "ERROR [$TEST_NAME/$VARIANT]: line $line: '$cmd' exited with $rc" >&2
    for ((i = 1; i < ${#FUNCNAME[@]}; i++)); do
        echo "    at ${FUNCNAME[i]} (${BASH_SOURCE[i]##*/}:${BASH_LINENO[i - 1]})" >&2
    done
}
trap 'on_error $? $LINENO "$BASH_COMMAND"' ERR

fail() {
    echo "FAIL [$TEST_NAME/$VARIANT]: $*" >&2
    exit 1
}

must_work() { [[ ${CI:-} == true || ${CONFINE_TESTS_MUST_WORK:-} == 1 ]]; }

skip() {
    if must_work; then
        fail "would skip, but skipping is an error under CI=true / CONFINE_TESTS_MUST_WORK=1: $*"
    fi
    echo "SKIP [$TEST_NAME/$VARIANT]: $*"
    if [[ -n ${IN_VARIANT:-} ]]; then echo "$*" >"$T/.skip-$VARIANT"; fi
    exit 77
}

# A feature this machine cannot have (e.g. a kernel built without IA-32 emulation): a skip even under CI,
# because no install step can provide it. The qemu VM suite runs these checks on kernels that have it.
skip_impossible() {
    echo "SKIP [$TEST_NAME/$VARIANT]: not possible on this machine: $*"
    if [[ -n ${IN_VARIANT:-} ]]; then echo "IMPOSSIBLE: $*" >"$T/.skip-$VARIANT"; fi
    exit 77
}

expect_eq() {
    [[ $1 == "$2" ]] || fail "${3:-value}: expected '$2', got '$1'"
}

expect_match() {
    [[ $1 =~ $2 ]] || fail "${3:-value}: expected to match /$2/, got '$1'"
}

expect_no_match() {
    [[ ! $1 =~ $2 ]] || fail "${3:-value}: expected NOT to match /$2/, got '$1'"
}

# try CMD...: run CMD with stdout/stderr captured; never fails.  Sets RC, OUT, ERRS.
try() {
    "$@" >"$T/.out" 2>"$T/.err" && RC=0 || RC=$?
    OUT=$(<"$T/.out")
    ERRS=$(<"$T/.err")
}

# A human-readable account of the last try, for failure messages.
last() { printf 'rc=%s stdout=%q stderr=%q' "$RC" "$OUT" "$ERRS"; }

# ---------------------------------------------------------------------------------------------
# Temp dir.  /tmp is 1777; $T and everything we create on the way is 0755 so uid 65534 can enter.
T=$(mktemp -d /tmp/confine-it.XXXXXXXX)
chmod 0755 "$T"
BG_PIDS=()
TEST_CLEANUPS=()

kill_bg() {
    local pid
    for pid in "${BG_PIDS[@]}"; do
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    BG_PIDS=()
}

test_cleanup() {
    local c
    trap - ERR
    kill_bg
    for c in "${TEST_CLEANUPS[@]}"; do eval "$c" || true; done
    rm -rf "$T"
}
trap test_cleanup EXIT

# bg CMD...: start CMD in the background (killed when the variant or test ends); its pid is $BG_PID.
bg() {
    "$@" &
    BG_PID=$!
    BG_PIDS+=("$BG_PID")
}

# at_exit 'SHELL CODE': run at the end of the whole test (from the main shell only).
at_exit() { TEST_CLEANUPS+=("$1"); }

# ---------------------------------------------------------------------------------------------
[[ -x $CONFINE ]] || fail "confine binary not found at CONFINE=$CONFINE (build it: ninja -C build)"
[[ -x $PROBE ]] || fail "probe not found at PROBE=$PROBE"

# Copies of confine and the probe that uid 65534 can execute (the checkout may be unreadable to it).
BIN=$T/bin
mkdir -m 0755 "$BIN"
cp "$CONFINE" "$BIN/confine"
# confine-tls (the brokers' TLS) is found beside confine.
cp "$(dirname "$CONFINE")/confine-tls" "$BIN/confine-tls"
cp "$PROBE" "$BIN/confine-test-probe"
chmod 0755 "$BIN/confine" "$BIN/confine-tls" "$BIN/confine-test-probe"
PROBE_BIN=$BIN/confine-test-probe

SUITE_UID=$(id -u)
SUITE_GID=$(id -g)

# The first global IPv4 address of the host (empty if none).
host_ipv4() {
    local ip
    ip=$(ip -4 -o addr show scope global 2>/dev/null | awk '{sub(/\/.*/, "", $4); print $4; exit}')
    if [[ -z $ip ]]; then
        ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+(\.[0-9]+){3}$' | head -n1 || true)
    fi
    echo "$ip"
}

# start_server_script SCRIPT ARGS...: run tests/integration/SCRIPT ENVFILE ARGS in the background, wait until it
# has written ENVFILE (it is listening), and source the port assignments in it. SERVER_WRAPPER=(CMD...), if set,
# runs it (e.g. `ip netns exec NS`).
SERVER_WRAPPER=()
start_server_script() {
    local script=$1 env=$T/servers.$RANDOM.env i
    shift
    bg "${SERVER_WRAPPER[@]}" /usr/bin/python3 "$TESTS_DIR/$script" "$env" "$@"
    for ((i = 0; i < 100; i++)); do
        [[ -e $env ]] && break
        kill -0 "$BG_PID" 2>/dev/null || fail "$script exited early"
        sleep 0.05
    done
    [[ -e $env ]] || fail "$script did not start within 5 s"
    # shellcheck disable=SC1090
    . "$env"
}

# start_servers ARGS...: host-servers.py (see that file): TCP_0_PORT, UDP_0_PORT, ...
start_servers() { start_server_script host-servers.py "$@"; }

# ---------------------------------------------------------------------------------------------
# Variants.

# setup_variant root|user: fresh $V, $H, $WS and the RUN_AS prefix for that variant.
setup_variant() {
    VARIANT=$1
    V=$T/$VARIANT
    mkdir -m 0755 "$V"
    if [[ $VARIANT == root ]]; then
        RUN_AS=()
        VUID=0 VGID=0
        CONF=$CONFINE
    elif [[ $SUITE_UID == 0 ]]; then
        RUN_AS=(setpriv --reuid="$UNPRIV_UID" --regid="$UNPRIV_GID" --clear-groups --)
        VUID=$UNPRIV_UID VGID=$UNPRIV_GID
        CONF=$BIN/confine
    else
        RUN_AS=()
        VUID=$SUITE_UID VGID=$SUITE_GID
        CONF=$BIN/confine
    fi

    H=$V/home/alice
    WS=$V/ws
    SSH_CANARY="CANARY-ssh-$RANDOM$RANDOM"
    AWS_CANARY="CANARY-aws-$RANDOM$RANDOM"
    mkdir -m 0755 -p "$V/home" "$H" "$WS"
    mkdir -m 0700 "$H/.ssh" "$H/.aws"
    echo "$SSH_CANARY" >"$H/.ssh/id_rsa"
    printf '[default]\naws_secret_access_key = %s\n' "$AWS_CANARY" >"$H/.aws/credentials"
    chmod 0600 "$H/.ssh/id_rsa" "$H/.aws/credentials"
    mkdir -m 0755 "$WS/.probe"
    cp "$PROBE" "$WS/.probe/confine-test-probe"
    chmod 0755 "$WS/.probe/confine-test-probe"
    PIN=$WS/.probe/confine-test-probe
    # confine keeps its workspace-scan cache in $XDG_CACHE_HOME (else ~/.cache): outside the fake home, so the
    # tests that fingerprint the home see only what the sandbox did.
    XDG=$T/xdg-cache-$VARIANT
    mkdir -m 0700 "$XDG"
    if [[ $SUITE_UID == 0 ]]; then
        chown -R "$VUID:$VGID" "$H" "$WS" "$XDG"
    fi

    OPTS=()
    XENV=()
    BASE_ENV=(PATH="$SANE_PATH" HOME="$H" XDG_CACHE_HOME="$XDG" USER=alice LOGNAME=alice LANG=C.UTF-8)
}

# host CMD...: run CMD on the host as the variant's user, with HOME=$H.
host() { "${RUN_AS[@]}" env HOME="$H" "$@"; }
host_probe() { try host "$PROBE_BIN" "$@"; }
# host_bg CMD...: start CMD on the host as the variant's user in the background; $BG_PID is CMD's own pid.
# Waits (up to 2 s) until setpriv/env have exec'd into the command, so the process already has the variant's uid
# when a test looks at it.
host_bg() {
    bg "${RUN_AS[@]}" env HOME="$H" "$@"
    local want i
    want=$(basename "$1")
    for ((i = 0; i < 200; i++)); do
        [[ $(cat "/proc/$BG_PID/comm" 2>/dev/null) == "${want:0:15}" ]] && return 0
        sleep 0.01
    done
}

# sb CONFINE-ARGS...: run confine as the variant's user with a clean environment (+ XENV).
SB_TIMEOUT=${SB_TIMEOUT:-40}
sb() { timeout -k 5 "$SB_TIMEOUT" "${RUN_AS[@]}" env -i "${BASE_ENV[@]}" "${XENV[@]}" "$CONF" "$@"; }

# sb_bg CONFINE-ARGS...: start confine in the background as the variant's user (no timeout wrapper);
# $BG_PID is confine's own pid (setpriv and env exec into it).
sb_bg() { bg "${RUN_AS[@]}" env -i "${BASE_ENV[@]}" "${XENV[@]}" "$CONF" "$@"; }

wait_file() {
    local i
    for ((i = 0; i < 400; i++)); do
        [[ -e $1 ]] && return 0
        kill -0 "$BG_PID" 2>/dev/null || break
        sleep 0.05
    done
    [[ -e $1 ]]
}

sandbox() { try sb -w "$WS" "${OPTS[@]}" -- "$@"; }
probe() { sandbox "$PIN" "$@"; }

# expect_refused WHAT REGEX CONFINE-ARGS...: confine (as the variant's user, see `sb`) exits 125 with exactly one
# stderr line "confine: ..." matching REGEX, nothing on stdout, and the command (which would create $V/ran) not run.
expect_refused() {
    local what=$1 re=$2
    shift 2
    try sb "$@"
    expect_eq "$RC" 125 "$what: exit code ($(last))"
    expect_match "$ERRS" '^confine: [^'$'\n'']+$' "$what: stderr must be one line 'confine: ...' ($(last))"
    expect_match "$ERRS" "$re" "$what: message"
    expect_eq "$OUT" "" "$what: stdout"
    [[ ! -e $V/ran ]] || fail "$what: the command ran"
}

expect_errno() {
    local want=$1
    shift
    probe "$@"
    [[ $RC == 1 && $OUT == "$want" ]] || fail "probe $* inside: expected errno $want, got $(last)"
}

expect_ok() {
    probe "$@"
    [[ $RC == 0 && $OUT == OK* ]] || fail "probe $* inside: expected OK, got $(last)"
}

# Fingerprint of a directory tree on the host (names, sizes, modes, content hashes).
tree_sum() {
    (cd "$1" && find . -printf '%p %s %m %U\n' | sort && find . -type f -exec sha256sum {} + | sort)
}

run_variants() {
    local fn=$1 v rc failed=0 skipped=()
    shift
    local variants=(root user)
    if [[ $# -gt 0 ]]; then variants=("$@"); fi
    for v in "${variants[@]}"; do
        if [[ $v == root && $SUITE_UID != 0 ]]; then
            skipped+=("root: the suite is not run as root")
            continue
        fi
        echo "=== $TEST_NAME [$v]"
        # The variant runs in a subshell with its own errexit/ERR trap; the main shell must not
        # treat its failure as an error of its own, so switch both off around it.
        trap - ERR
        set +e
        (
            set -e
            trap 'on_error $? $LINENO "$BASH_COMMAND"' ERR
            trap 'trap - ERR; kill_bg' EXIT
            BG_PIDS=()
            IN_VARIANT=1
            setup_variant "$v"
            "$fn"
        )
        rc=$?
        set -e
        trap 'on_error $? $LINENO "$BASH_COMMAND"' ERR
        case $rc in
        0) echo "--- ok [$v]" ;;
        77) skipped+=("$v: $(cat "$T/.skip-$v" 2>/dev/null)") ;;
        *)
            echo "--- FAILED [$v] (exit $rc)"
            failed=1
            ;;
        esac
    done
    VARIANT=all
    ((failed == 0)) || exit 1
    if ((${#skipped[@]})); then
        local s possible=0
        for s in "${skipped[@]}"; do [[ $s == *": IMPOSSIBLE: "* ]] || possible=1; done
        ((possible)) && skip "${skipped[*]}"
        skip_impossible "${skipped[*]}"
    fi
    exit 0
}
