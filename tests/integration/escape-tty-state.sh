#!/bin/bash
# escape-tty-state: a sandboxed command on the caller's terminal cannot change that terminal for the rest of the
# session: TIOCEXCL (no one may open it again: EBUSY) and TIOCSETD to N_NULL (the line discipline that drops
# everything: the user's shell is dead) are refused, and after the run the host sees the terminal as it was
# (not exclusive, line discipline N_TTY).  Controls: the same probe without confine does change it.  And what
# editors and TUIs need still works inside: termios changes, the window size (seen on the host afterwards), and a
# process group of its own made the foreground group.
. "$(dirname "$0")/lib.sh"

# on_pty SHELL-COMMAND: run it on a fresh pty (script); sets RC, OUT (carriage returns dropped).
on_pty() {
    try timeout -k 5 30 script -qec "$1" /dev/null </dev/null
    OUT=${OUT//$'\r'/}
}

scenario() {
    local host_probe in_sandbox
    host_probe=$(printf '%q ' "${RUN_AS[@]}" "$PROBE_BIN")
    # -q: the probe's answer alone on the terminal, without confine's summary of what it refused.
    in_sandbox=$(printf '%q ' "${RUN_AS[@]}" env -i "${BASE_ENV[@]}" "$CONF" -q -w "$WS" -- "$PIN")
    # Written by script's shell (root), so the results survive a terminal that no longer shows output.
    local action want
    for action in excl "setd 27"; do
        want=$([[ $action == excl ]] && echo "OK ldisc=0 excl=1" || echo "OK ldisc=27 excl=0")
        on_pty "$host_probe tty $action >$V/did 2>&1; $host_probe tty state >$V/after 2>&1"
        expect_eq "$(cat "$V/did"):$(cat "$V/after")" "OK:$want" "host control: tty $action without confine"

        on_pty "$in_sandbox tty $action >$V/did 2>&1; $host_probe tty state >$V/after 2>&1"
        echo "tty $action inside: $(cat "$V/did"); the terminal afterwards: $(cat "$V/after")"
        expect_eq "$(cat "$V/did")" EPERM "tty $action inside"
        expect_eq "$(cat "$V/after")" "OK ldisc=0 excl=0" "the terminal on the host after tty $action inside"
    done
    on_pty "$in_sandbox tty vhangup >$V/did 2>&1; $host_probe tty state >$V/after 2>&1"
    expect_eq "$(cat "$V/did"):$(cat "$V/after")" "EPERM:OK ldisc=0 excl=0" "tty vhangup inside, then the terminal"

    # What a TUI does still works, and the window size it sets is the terminal's own.
    on_pty "$in_sandbox tty termios >$V/termios 2>&1; $in_sandbox tty winsz 33 101 >$V/winsz 2>&1; stty size >$V/size"
    expect_eq "$(cat "$V/termios")" "OK echo-off=1 echo-restored=1" "termios changes inside"
    expect_eq "$(cat "$V/winsz")" "OK rows=33 cols=101" "TIOCSWINSZ inside"
    expect_eq "$(cat "$V/size")" "33 101" "the window size on the host afterwards"
    # A terminal of its own: the probe leaves the foreground to its (then gone) group.
    on_pty "$in_sandbox tty pgrp >$V/pgrp 2>&1"
    expect_eq "$(cat "$V/pgrp")" "OK foreground-is-self=1" "job control inside (TIOCSPGRP, TIOCGPGRP)"
}
run_variants scenario
