#!/bin/bash
# escape-dev-minimal: /dev inside is minimal: the host's disks, kernel memory, kernel log, loop, fuse, tun
# and console devices do not exist there (ENOENT); the harmless ones work.
. "$(dirname "$0")/lib.sh"

scenario() {
    local d
    for d in /dev/mem /dev/kmem /dev/port /dev/kmsg /dev/console /dev/tty0 /dev/vda /dev/sda /dev/nvme0n1 \
        /dev/loop0 /dev/loop-control /dev/fuse /dev/net/tun /dev/kvm /dev/btrfs-control /dev/cpu_dma_latency; do
        expect_errno ENOENT stat "$d"
    done
    # Whatever block device the host has is absent too.
    for d in /dev/*; do
        [[ -b $d ]] || continue
        expect_errno ENOENT stat "$d"
    done
    probe read /dev/null
    expect_eq "$OUT" "OK 0" "read /dev/null ($(last))"
    expect_ok write /dev/null x
    sandbox /bin/sh -c 'head -c 16 /dev/urandom | wc -c; head -c 4 /dev/zero | wc -c'
    expect_eq "$OUT" $'16\n4' "/dev/urandom and /dev/zero ($(last))"
}
run_variants scenario
