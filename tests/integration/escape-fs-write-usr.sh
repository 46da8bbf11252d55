#!/bin/bash
# escape-fs-write-usr: /usr, /etc, /opt, /var and /srv are read-only inside: creating or truncating a file
# there fails with EROFS (as root too: the sandbox has no capabilities and the mounts are read-only).
. "$(dirname "$0")/lib.sh"

at_exit "rm -f /usr/confine-escape-$$ /etc/confine-escape-$$ /opt/confine-escape-$$ /var/confine-escape-$$ /srv/confine-escape-$$"

scenario() {
    local d
    for d in /usr /etc /opt /var /srv; do
        [[ -d $d ]] || continue
        expect_errno EROFS write "$d/confine-escape-$$"
        [[ ! -e $d/confine-escape-$$ ]] || fail "$d/confine-escape-$$ appeared on the host"
    done
    local before
    before=$(sha256sum /etc/hostname /usr/bin/env)
    expect_errno EROFS write /etc/hostname evil
    expect_errno EROFS write /usr/bin/env evil
    expect_eq "$(sha256sum /etc/hostname /usr/bin/env)" "$before" "host files after the write attempts"
}
run_variants scenario
