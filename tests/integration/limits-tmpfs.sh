#!/bin/bash
# limits-tmpfs: every in-memory directory confine makes has a size. By default /tmp, /var/tmp, /run and $HOME
# hold 1 GiB each and /dev/shm 64 MiB (docker's), not half the host's memory each; --tmpfs-size, --shm-size and a
# profile's limits set them, a --tmpfs without size= takes --tmpfs-size, and --memory caps them all. Writing past
# the bound fails with ENOSPC inside, and nothing of it reaches the host.
. "$(dirname "$0")/lib.sh"

# Sizes in KiB of the given mount points, as the sandbox sees them: "DIR=SIZE ...".
SIZES='for d in "$@"; do printf "%s=%s " "$d" "$(df -k --output=size "$d" | tail -1 | tr -d " ")"; done'

scenario() {
    sandbox /bin/sh -c "$SIZES" sizes /tmp /var/tmp /run "$H" /dev/shm
    expect_eq "$OUT" "/tmp=1048576 /var/tmp=1048576 /run=1048576 $H=1048576 /dev/shm=65536 " "default sizes ($(last))"

    OPTS=(--tmpfs-size 2m --shm-size 1m --tmpfs /scratch --tmpfs /big:size=8m)
    sandbox /bin/sh -c "$SIZES" sizes /tmp /var/tmp /run "$H" /dev/shm /scratch /big
    expect_eq "$OUT" "/tmp=2048 /var/tmp=2048 /run=2048 $H=2048 /dev/shm=1024 /scratch=2048 /big=8192 " \
        "sizes from the flags ($(last))"
    local d
    for d in /tmp /var/tmp /run "$H" /scratch; do
        sandbox /bin/sh -c 'dd if=/dev/zero of="$1/fill" bs=64k count=64 2>&1; echo "rc=$?"' fill "$d"
        expect_match "$OUT" "No space left on device" "writing 4 MiB to $d, sized 2 MiB ($(last))"
        expect_match "$OUT" "rc=1" "dd fails in $d ($(last))"
    done
    sandbox /bin/sh -c 'dd if=/dev/zero of=/dev/shm/fill bs=64k count=32 2>&1; echo "rc=$?"'
    expect_match "$OUT" "No space left on device" "writing 2 MiB to /dev/shm, sized 1 MiB ($(last))"

    # --memory caps every size (with --best-effort where no cgroup can hold the limit itself).
    OPTS=(--best-effort --memory 16m)
    sandbox /bin/sh -c "$SIZES" sizes /tmp "$H" /dev/shm
    expect_eq "$OUT" "/tmp=16384 $H=16384 /dev/shm=16384 " "sizes under --memory 16m ($(last))"

    # A profile sets them too; the flag wins over the profile.
    cat >"$V/sized.toml" <<'TOML'
format = "confine-profile/1"
[limits]
tmpfs_size = "3m"
shm_size = "2m"
TOML
    OPTS=(--profile "$V/sized.toml")
    sandbox /bin/sh -c "$SIZES" sizes /tmp /dev/shm
    expect_eq "$OUT" "/tmp=3072 /dev/shm=2048 " "sizes from a profile ($(last))"
    OPTS=(--profile "$V/sized.toml" --tmpfs-size 5m)
    sandbox /bin/sh -c "$SIZES" sizes /tmp
    expect_eq "$OUT" "/tmp=5120 " "the flag over the profile ($(last))"

    OPTS=(--tmpfs-size lots)
    sandbox true
    expect_eq "$RC" 125 "a size that is not one ($(last))"
    expect_match "$ERRS" "tmpfs-size" "the error names the flag ($(last))"
    [[ ! -e /tmp/fill && ! -e /var/tmp/fill && ! -e /dev/shm/fill ]] || fail "a file written inside reached the host"
}
run_variants scenario
