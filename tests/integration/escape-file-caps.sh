#!/bin/bash
# escape-file-caps: the sandbox cannot leave a file capability (security.capability) in the workspace, which would
# hand the capability to whoever runs the file on the host. setxattr, lsetxattr and fsetxattr are tried from
# inside, in full mode (as root: through the idmapped workspace) and in fallback mode; each file is judged on the
# host after the run with a raw getxattr. The layer is the dropped capabilities (no CAP_SETFCAP, bounding set
# empty); as root, a host control proves the value written is one the kernel accepts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

VIAS=(setxattr lsetxattr fsetxattr)

scenario() {
    local mode via
    if [[ $VARIANT == root ]]; then
        # Control: the same value, written by real root on the host, is accepted and reads back.
        cp "$PROBE" "$T/cap-control"
        host_probe set-filecap setxattr "$T/cap-control"
        expect_eq "$OUT" OK "host control: root sets the file capability ($(last))"
        host_probe getxattr "$T/cap-control" security.capability
        expect_eq "$OUT" "OK 20" "host control: the capability reads back ($(last))"
        rm -f "$T/cap-control"
    fi
    for mode in full fallback; do
        set_mode "$mode"
        for via in "${VIAS[@]}"; do
            local f=$WS/cap-$mode-$via
            cp "$PROBE" "$f"
            chown "$VUID:$VGID" "$f"
            sandbox /bin/sh -c '"$1" set-filecap "$2" "$3"; "$1" getxattr "$3" security.capability' sh "$PIN" "$via" "$f"
            expect_eq "$OUT" $'EPERM\nENODATA' "[$mode] $via inside ($(last))"
            host_probe getxattr "$f" security.capability
            expect_eq "$OUT" ENODATA "[$mode] $via: security.capability on the host after the run ($(last))"
            expect_eq "$(getcap "$f")" "" "[$mode] $via: getcap on the host"
        done
    done
}
run_variants scenario
