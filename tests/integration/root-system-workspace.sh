#!/bin/bash
# root-system-workspace: as root, a system directory is never the workspace nor a --rw bind. `-w /etc`,
# `-w /usr/lib`, `cd /etc && confine`, `-w /usr/../etc`, a workspace that is a link to /etc, `--rw /usr/bin` and
# `confine run -v /etc:/data` each exit 125 with one line naming the directory, run nothing and change nothing
# in /etc, /usr/bin or /usr/lib. Controls: a workspace in /var/tmp and `--ro /usr/bin` run.
. "$(dirname "$0")/lib.sh"

MARKER=confine-it-ran-$$

state() { stat -c '%n %Y %Z %h' /etc /usr/bin /usr/lib; }
in_dir() { (cd "$1" && shift && "$@"); }

# refused WHAT REGEX [cd DIR] CONFINE-ARGS...: exit 125, one line matching REGEX, the command did not run.
refused() {
    local what=$1 regex=$2 dir=$PWD
    shift 2
    if [[ $1 == cd ]]; then dir=$2 && shift 2; fi
    try in_dir "$dir" sb "$@"
    expect_eq "$RC" 125 "$what: exit code ($(last))"
    expect_match "$ERRS" '^confine: [^'$'\n'']+$' "$what: stderr must be one line 'confine: ...'"
    expect_match "$ERRS" "$regex" "$what: the reason"
    if [[ -e /etc/$MARKER || -e /usr/bin/$MARKER || -e /usr/lib/$MARKER ]]; then
        rm -f "/etc/$MARKER" "/usr/bin/$MARKER" "/usr/lib/$MARKER"
        fail "$what: the command ran"
    fi
}

scenario() {
    local before
    before=$(state)
    local run=(-- sh -c "touch $MARKER; touch /etc/$MARKER /usr/bin/$MARKER")

    refused "-w /etc" "workspace \`/etc\` is the system directory \`/etc\`: as root" -w /etc "${run[@]}"
    refused "-w /usr/lib" "workspace \`/usr/lib\` lies inside the system directory \`/usr\`" -w /usr/lib "${run[@]}"
    refused "cd /etc && confine" "workspace \`/etc\` is the system directory \`/etc\`" cd /etc "${run[@]}"
    refused "-w /usr/../etc" "workspace \`/etc\` is the system directory" -w /usr/../etc "${run[@]}"
    ln -s /etc "$V/etc-link"
    refused "-w a link to /etc" "workspace \`/etc\` is the system directory" -w "$V/etc-link" "${run[@]}"
    refused "--rw /usr/bin" "--rw \`/usr/bin\` lies inside the system directory \`/usr\`" -w "$WS" --rw /usr/bin "${run[@]}"
    refused "confine run -v /etc:/data" "workspace \`/etc\` is the system directory" \
        run -v /etc:/data -w /data host sh -c "touch $MARKER"
    expect_eq "$(state)" "$before" "/etc, /usr/bin and /usr/lib after the refused runs"

    # Controls: /var/tmp is the one place in /var for work; a read-only bind changes nothing on the host.
    local vt=$VAR_TMP_WS/$VARIANT
    mkdir "$vt"
    try sb -w "$vt" --ro /usr/bin -- sh -c 'echo ok > made-here'
    expect_eq "$RC" 0 "a workspace in /var/tmp with --ro /usr/bin ($(last))"
    expect_eq "$(cat "$vt/made-here")" ok "the /var/tmp workspace was written"
}
VAR_TMP_WS=$(mktemp -d /var/tmp/confine-it.XXXXXXXX)
at_exit "rm -rf '$VAR_TMP_WS'"
run_variants scenario root
