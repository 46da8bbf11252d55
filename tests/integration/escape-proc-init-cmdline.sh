#!/bin/bash
# escape-proc-init-cmdline: the sandbox's pid 1 is a copy of confine, so its memory starts with confine's own
# command line (host paths, --env values, the --mask list) and environment (including the credentials the scrub
# keeps from the command). Inside, /proc/1/cmdline (readable by any process, no ptrace check) shows only
# "confine-init", and /proc/1/environ gives none of it.  Judged against confine's own /proc entries on the host,
# which do hold the markers.
. "$(dirname "$0")/lib.sh"

scenario() {
    local env_mark="ENVMARK$RANDOM$RANDOM" token_mark="TOKENMARK$RANDOM$RANDOM" mask_mark="maskmark$RANDOM$RANDOM"
    mkdir -m 0755 "$WS/$mask_mark"
    echo data >"$WS/$mask_mark/file"
    chown -R "$VUID:$VGID" "$WS/$mask_mark"
    # GITHUB_TOKEN is scrubbed from the command's environment, but confine itself (and so pid 1) starts with it.
    XENV=(GITHUB_TOKEN="$token_mark")
    OPTS=(--env "MARKED=$env_mark" --mask "$mask_mark")

    # Host control: while it runs, confine's own command line and environment hold all three markers.
    sb_bg -q -w "$WS" "${OPTS[@]}" -- sleep 30
    local pid=$BG_PID i cmdline='' environ=''
    # Until setpriv and env have exec'd into confine (env's own command line holds the markers too).
    for ((i = 0; i < 100; i++)); do
        cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || true
        [[ $(cat "/proc/$pid/comm" 2>/dev/null) == confine && $cmdline == *"$env_mark"* ]] && break
        sleep 0.05
    done
    environ=$(tr '\0' '\n' <"/proc/$pid/environ")
    expect_match "$cmdline" "$env_mark.*$mask_mark" "host control: confine's /proc/$pid/cmdline"
    expect_match "$environ" "GITHUB_TOKEN=$token_mark" "host control: confine's /proc/$pid/environ"
    kill_bg

    sandbox /bin/sh -c 'echo "cmdline=[$(tr "\0" "\n" </proc/1/cmdline | grep . | tr "\n" " ")]"
        echo "environ=[$(tr "\0" "\n" </proc/1/environ 2>&1 | grep . | tr "\n" " ")]"
        echo "task=[$(tr "\0" "\n" </proc/1/task/1/cmdline | grep . | tr "\n" " ")]"
        echo "command=[$MARKED]"'
    echo "$OUT"
    expect_eq "$RC" 0 "the sandbox ($(last))"
    # The command itself gets --env (the control that the marker is passed at all).
    expect_match "$OUT" "command=\\[$env_mark\\]" "the command's own environment"
    expect_match "$OUT" 'cmdline=\[confine-init \]' "/proc/1/cmdline inside"
    expect_match "$OUT" 'task=\[confine-init \]' "/proc/1/task/1/cmdline inside"
    local leaked
    leaked=$(grep -E "^(cmdline|environ|task)=" <<<"$OUT" | grep -E "$env_mark|$token_mark|$mask_mark" || true)
    [[ -z $leaked ]] || fail "pid 1 shows confine's arguments or environment inside: $leaked"
}
run_variants scenario
