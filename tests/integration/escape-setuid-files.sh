#!/bin/bash
# escape-setuid-files: the sandbox cannot leave a setuid or setgid file in the workspace, where it would run with
# the owner's ids (root's, for a root-owned workspace) for anyone on the host. Every syscall a mode can arrive by
# is tried from inside, in full and in fallback mode, and each planted file is judged on the host after the run:
# no S_ISUID or S_ISGID. A control run without the seccomp layer proves each path would have planted the bit.
# Ordinary modes (0755, 0644) keep working; openat2, whose mode seccomp cannot read, answers ENOSYS. Also: a hard
# link to a host setuid binary, a rewritten setuid file, a file made in a setgid directory.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

# A setuid-root binary of the host, for the hard-link attempt (Debian has several).
HOST_SUID=$(find /usr/bin /bin -maxdepth 1 -type f -perm -4000 -user root 2>/dev/null | head -n1)
VIAS=(chmod fchmod fchmodat fchmodat2 open openat creat mknod mknodat tmpfile)
BITS=(4755 2755 6755)

# plant PREFIX MODES...: in one sandbox, set-mode every VIA with every MODE on $WS/PREFIX-VIA-MODE; prints one
# line "VIA MODE RESULT" per try into $OUT.
plant() {
    local prefix=$1
    shift
    sandbox /bin/sh -c 'probe=$1 prefix=$2 modes=$3; shift 3
        for via in "$@"; do for mode in $modes; do
            printf "%s %s " "$via" "$mode"; "$probe" set-mode "$via" "$prefix-$via-$mode" "$mode"
        done; done; exit 0' sh "$PIN" "$WS/$prefix" "$*" "${VIAS[@]}" openat2
    [[ $RC == 0 ]] || fail "[$MODE] planting $prefix: $(last)"
}

# inside_result VIA MODE: what the probe answered for that try.
inside_result() { awk -v via="$1" -v mode="$2" '$1 == via && $2 == mode { print $3 }' <<<"$OUT"; }

# host_special_bits FILE: the setuid/setgid bits of FILE as the host sees it (octal, 0 if none; "none" if absent).
host_special_bits() {
    if [[ -e $1 ]]; then printf '%o\n' $((0x$(stat -c %f "$1") & 06000)); else echo none; fi
}

scenario() {
    local mode via bits problems=()
    for mode in full fallback; do
        set_mode "$mode"
        plant p "${BITS[@]}"
        for via in "${VIAS[@]}"; do
            for bits in "${BITS[@]}"; do
                local got host
                got=$(inside_result "$via" "$bits")
                host=$(host_special_bits "$WS/p-$via-$bits")
                [[ $got == EPERM ]] || problems+=("[$mode] $via $bits: expected EPERM inside, got '$got'")
                [[ $host == 0 || $host == none ]] || problems+=("[$mode] $via $bits: the host sees mode bits $host")
            done
        done
        for bits in "${BITS[@]}"; do
            [[ $(inside_result openat2 "$bits") == ENOSYS ]] ||
                problems+=("[$mode] openat2 $bits: expected ENOSYS inside, got '$(inside_result openat2 "$bits")'")
            [[ $(host_special_bits "$WS/p-openat2-$bits") == none ]] || problems+=("[$mode] openat2 $bits left a file")
        done
        ((${#problems[@]} == 0)) || fail "setuid/setgid plants:"$'\n'"$(printf '    %s\n' "${problems[@]}")"
        rm -f "$WS"/p-*

        # A second name for a setuid binary of the host cannot be made in the workspace (it would keep that binary,
        # and any hole in it, alive after an upgrade): across the mount it is EXDEV, in fallback mode Landlock
        # (EXDEV) or the kernel's protected_hardlinks (EPERM) refuse it.
        [[ -n $HOST_SUID ]] || fail "no setuid-root binary in /usr/bin or /bin to try a hard link to"
        sandbox /bin/sh -c 'ln "$1" suid-link' sh "$HOST_SUID"
        expect_match "$ERRS" "(Invalid cross-device link|Operation not permitted)" "[$mode] ln $HOST_SUID ($(last))"
        [[ ! -e $WS/suid-link ]] || fail "[$mode] a hard link to $HOST_SUID is in the workspace on the host"

        # Ordinary modes keep working through every path.
        plant ok 0755 0644
        for via in "${VIAS[@]}"; do
            expect_eq "$(inside_result "$via" 0755)" OK "[$mode] $via 0755 (${OUT//$'\n'/; })"
            expect_eq "$(stat -c %a "$WS/ok-$via-0755")" 755 "[$mode] $via 0755 on the host"
            expect_eq "$(stat -c %a "$WS/ok-$via-0644")" 644 "[$mode] $via 0644 on the host"
        done
        sandbox /bin/sh -c 'touch script && chmod +x script && chmod 0600 script && chmod u+x,go-rwx script && stat -c %a script'
        expect_eq "$OUT" 700 "[$mode] chmod +x, 0600, u+x on a new file ($(last))"
        rm -f "$WS"/ok-* "$WS/script"
    done
    set_mode full

    # A setuid file already in the workspace loses the bit when the sandbox rewrites it: the kernel drops it for
    # a writer without CAP_FSETID, and the bit cannot be set back.
    cp "$PROBE" "$WS/old-suid"
    chown "$VUID:$VGID" "$WS/old-suid"
    chmod 4755 "$WS/old-suid"
    sandbox /bin/sh -c 'printf "#!/bin/sh\nid\n" >old-suid; chmod 4755 old-suid'
    expect_match "$ERRS" "Operation not permitted" "chmod 4755 after the rewrite ($(last))"
    expect_eq "$(host_special_bits "$WS/old-suid")" 0 "a setuid file rewritten inside, on the host"

    # A setgid directory hands its group to new files, never the bit: a file made in it is not setgid.
    mkdir -m 2775 "$WS/shared"
    chown "$VUID:$VGID" "$WS/shared"
    expect_ok set-mode openat "$WS/shared/new" 0775
    expect_eq "$(host_special_bits "$WS/shared/new")" 0 "a file created in a setgid directory, on the host"
    # seccomp sees the mode and not the file, so chmod g+s on a directory is refused too.
    sandbox /bin/sh -c 'mkdir plain && chmod 2775 plain'
    expect_match "$ERRS" "Operation not permitted" "chmod 2775 on a directory ($(last))"
    expect_eq "$(host_special_bits "$WS/plain")" 0 "a directory after chmod 2775 inside, on the host"

    # Control: without the seccomp layer every path plants the bits, so the checks above can fail.
    XENV+=(CONFINE_TEST_FEATURES=seccomp=0)
    OPTS+=(--best-effort -q)
    plant ctl 6755
    local seen=()
    for via in "${VIAS[@]}"; do seen+=("$via=$(host_special_bits "$WS/ctl-$via-6755")"); done
    rm -f "$WS"/ctl-*
    expect_eq "${seen[*]}" "$(printf '%s=6000 ' "${VIAS[@]}" | sed 's/ $//')" "control without seccomp (${OUT//$'\n'/; })"
}
run_variants scenario
