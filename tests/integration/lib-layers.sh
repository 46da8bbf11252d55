# lib-layers.sh: helpers for the seccomp-*, fallback-*, report-* tests.  Source it after lib.sh:
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-layers.sh"
#
#   set_mode full|fallback [FLAGS...]   OPTS for that mode: full is the default sandbox, fallback is forced
#                                        with --no-namespaces --best-effort (-q: no warnings in $ERRS)
#   check_syscall_table TABLE            run every row of TABLE with the probe's `syscalls` verb in one sandbox
#                                        of the current mode and compare with the expected result, then prove
#                                        the seccomp layer is what answers (controls, below)
#   fallback_layout                      move $H and $WS out of /tmp (see there)
#
# TABLE: one row per line, "SPEC EXPECTED [CONTROL]"; '#' starts a comment.
#   SPEC      NAME or NAME:ARG,ARG,... (see the probe's `syscall` verb: numbers, constants, A|B, BAD, BUF)
#   EXPECTED  what the probe must print inside: OK, an errno name, or SIG<NAME> (the call killed it)
#   CONTROL   which control proves that seccomp, and not the kernel itself, gives EXPECTED:
#     (none)  the same sandbox with the seccomp layer switched off (CONFINE_TEST_FEATURES=seccomp=0
#             --best-effort) must answer something else: the arguments are chosen so that the kernel fails
#             with EFAULT/EBADF/EINVAL/ENOSYS first (bubblewrap's try-syscall idea)
#     cap     the kernel checks a capability before the arguments, so without capabilities it also answers
#             EPERM: the control is run on the host as real root (root variant only; the arguments are
#             invalid, so the kernel fails the call without doing anything); the user variant can only show
#             that the call is refused
#     cap?    capability-gated only where the kernel has the syscall (kexec, modules): the seccomp-off control
#             runs, and if it answers EPERM the row falls back to the host-root control like `cap`
#     -       no control for this row: an allowed call whose answer is the kernel's, or a row whose control is
#             another row of the table (the comment says which)

FALLBACK_FLAGS=(--no-namespaces --best-effort -q)

set_mode() {
    MODE=$1
    shift
    case $MODE in
    full) OPTS=("$@") ;;
    fallback) OPTS=("${FALLBACK_FLAGS[@]}" "$@") ;;
    *) fail "set_mode: unknown mode $MODE" ;;
    esac
}

# parse_results: the probe's "SPEC=RESULT" lines in $OUT -> the associative array RES.
declare -gA RES=()
parse_results() {
    local line
    RES=()
    while IFS= read -r line; do
        if [[ $line == *=* ]]; then RES[${line%=*}]=${line##*=}; fi
    done <<<"$OUT"
}

check_syscall_table() {
    local table=$1 line spec want ctl i problems=() specs=() wants=() ctls=() inside=() noseccomp=() hostroot=()
    while IFS= read -r line; do
        line=${line%%#*}
        read -r spec want ctl <<<"$line" || true
        [[ -n ${spec:-} ]] || continue
        specs+=("$spec")
        wants+=("$want")
        ctls+=("${ctl:-}")
    done <<<"$table"
    ((${#specs[@]})) || fail "check_syscall_table: empty table"

    # 1. Inside the sandbox, with the seccomp layer.
    probe syscalls "${specs[@]}"
    [[ $RC == 0 ]] || fail "[$MODE] probe syscalls: $(last)"
    parse_results
    for i in "${!specs[@]}"; do
        inside[i]=${RES[${specs[i]}]:-missing}
        noseccomp[i]=
        hostroot[i]=
        [[ ${inside[i]} == "${wants[i]}" ]] || problems+=("${specs[i]}: expected ${wants[i]} inside, got ${inside[i]}")
    done

    # 2. Control: the same sandbox without the seccomp layer, for the rows whose answer is a denial.
    local saved_opts=("${OPTS[@]}") saved_xenv=("${XENV[@]}") cspecs=()
    for i in "${!specs[@]}"; do
        [[ ${wants[i]} != OK && (-z ${ctls[i]} || ${ctls[i]} == 'cap?') ]] && cspecs+=("${specs[i]}")
    done
    if ((${#cspecs[@]})); then
        XENV+=(CONFINE_TEST_FEATURES=seccomp=0)
        OPTS+=(--best-effort -q)
        probe syscalls "${cspecs[@]}"
        OPTS=("${saved_opts[@]}")
        XENV=("${saved_xenv[@]}")
        [[ $RC == 0 ]] || fail "[$MODE] control without seccomp: $(last)"
        parse_results
        for i in "${!specs[@]}"; do
            [[ ${wants[i]} != OK && (-z ${ctls[i]} || ${ctls[i]} == 'cap?') ]] || continue
            noseccomp[i]=${RES[${specs[i]}]:-missing}
            if [[ ${ctls[i]} == 'cap?' && ${noseccomp[i]} == EPERM ]]; then
                ctls[i]=cap
                continue
            fi
            [[ ${noseccomp[i]} != "${wants[i]}" && ${noseccomp[i]} != missing ]] ||
                problems+=("${specs[i]}: without seccomp the kernel also answers ${noseccomp[i]}, so the row proves nothing")
        done
    fi

    # 3. Control for capability-gated rows: on the host as real root (the root variant only).
    cspecs=()
    for i in "${!specs[@]}"; do
        [[ ${ctls[i]} == cap ]] && cspecs+=("${specs[i]}")
    done
    if ((${#cspecs[@]})) && [[ $VARIANT == root ]]; then
        host_probe syscalls "${cspecs[@]}"
        [[ $RC == 0 ]] || fail "[$MODE] host control: $(last)"
        parse_results
        for i in "${!specs[@]}"; do
            [[ ${ctls[i]} == cap ]] || continue
            hostroot[i]=${RES[${specs[i]}]:-missing}
            [[ ${hostroot[i]} != "${wants[i]}" && ${hostroot[i]} != missing ]] ||
                problems+=("${specs[i]}: on the host, as root, the kernel also answers ${hostroot[i]}")
        done
    fi

    for i in "${!specs[@]}"; do
        local c=${noseccomp[i]:+seccomp-off=${noseccomp[i]}}
        [[ -n ${hostroot[i]} ]] && c+=" host-root=${hostroot[i]}"
        [[ ${ctls[i]} == cap && $VARIANT != root ]] && c+="(no control: capability-gated)"
        [[ ${ctls[i]} == - ]] && c+="(no control)"
        printf '  %-10s %-42s inside=%-13s %s\n' "[$MODE]" "${specs[i]}" "${inside[i]}" "$c"
    done
    ((${#problems[@]} == 0)) || fail "[$MODE] (opts: ${OPTS[*]}):"$'\n'"$(printf '    %s\n' "${problems[@]}")"
}

# check_syscall_table_both TABLE: check_syscall_table in full mode and in forced fallback mode.
check_syscall_table_both() {
    set_mode full
    check_syscall_table "$1"
    set_mode fallback
    check_syscall_table "$1"
    set_mode full
}

# ---------------------------------------------------------------------------------------------
# Fallback layout.  lib.sh puts $H and $WS under /tmp, the directory where fallback mode makes each run's
# private $HOME and $TMPDIR, so "outside the workspace" is tested somewhere of its own: a base directory under
# /home (root), or under the suite user's real home.  fallback_base (call it in the main shell, before run_variants) creates it; fallback_layout (in
# the scenario) moves $H and $WS there, with the same content and owners as setup_variant gives them.
FB_BASE=
fallback_base() {
    local parent
    for parent in /home "${HOME:-}"; do
        [[ -n $parent && -d $parent && -w $parent ]] || continue
        case $(realpath "$parent")/ in
        /tmp/* | /var/* | /dev/* | /usr/* | /etc/* | /opt/* | /srv/* | /proc/* | /sys/* | /nix/*) continue ;;
        esac
        FB_BASE=$(mktemp -d "$parent/confine-it-fallback.XXXXXXXX")
        chmod 0755 "$FB_BASE"
        at_exit "rm -rf '$FB_BASE'"
        return 0
    done
    FB_BASE=
}

fallback_layout() {
    [[ -n $FB_BASE ]] || skip "no directory outside /tmp, /var and the other paths Landlock allows in fallback mode (tried /home and \$HOME)"
    local base=$FB_BASE/$VARIANT
    mkdir -m 0755 "$base" "$base/home"
    H=$base/home/alice
    WS=$base/ws
    mkdir -m 0755 "$H" "$WS" "$WS/.probe"
    mkdir -m 0700 "$H/.ssh" "$H/.aws"
    echo "$SSH_CANARY" >"$H/.ssh/id_rsa"
    printf '[default]\naws_secret_access_key = %s\n' "$AWS_CANARY" >"$H/.aws/credentials"
    chmod 0600 "$H/.ssh/id_rsa" "$H/.aws/credentials"
    cp "$PROBE" "$WS/.probe/confine-test-probe"
    chmod 0755 "$WS/.probe/confine-test-probe"
    PIN=$WS/.probe/confine-test-probe
    if [[ $SUITE_UID == 0 ]]; then
        chown -R "$VUID:$VGID" "$base"
    fi
    # confine's caches (the scan's, the git check's) stay outside the fingerprinted tree, as in setup_variant.
    BASE_ENV=(PATH="$SANE_PATH" HOME="$H" XDG_CACHE_HOME="$XDG" USER=alice LOGNAME=alice LANG=C.UTF-8)
    FB_DIR=$base
}

# json_eval JSON-TEXT PYTHON-EXPR: evaluate EXPR with `d` bound to the parsed JSON; prints the result.
json_eval() {
    python3 -c 'import json, sys
d = json.loads(sys.argv[1])
print(eval(sys.argv[2]))' "$1" "$2"
}
