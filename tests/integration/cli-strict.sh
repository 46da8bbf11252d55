#!/bin/bash
# cli-strict: every subcommand refuses a word it does not take, as the main command does: exit 125 and one line
# "confine: ..." naming the word (an unknown option with the closest known one), nothing run. `--profile` with a
# name that is not found suggests the closest built-in or user profile.
# shellcheck disable=SC2016 # backquotes in the expected messages are literal
. "$(dirname "$0")/lib.sh"

scenario() {
    local marker=$V/ran
    chmod 0777 "$V"   # so that a command that wrongly runs can leave the marker

    # Words after a subcommand that takes none.
    expect_refused "probe --jsn" '--jsn: unknown option of `confine probe`; did you mean `--json`\?' probe --jsn
    expect_refused "probe extra" 'extra: unexpected argument: `confine probe` takes' probe extra
    expect_refused "probe -- word" 'touch: unexpected argument: `confine probe`' probe -- touch "$marker"
    expect_refused "doctor extra" 'extra: unexpected argument: `confine doctor`' doctor -w "$WS" extra
    expect_refused "doctor --net-lg" '--net-lg: unknown option of `confine doctor`; did you mean `--net-log`\?' \
        doctor -w "$WS" --net-lg x
    expect_refused "doctor -- command" 'touch: unexpected argument: `confine doctor`' doctor -w "$WS" -- touch "$marker"
    expect_refused "doctor probe" 'probe: unexpected argument: `confine doctor`' doctor -w "$WS" probe
    expect_refused "checkpoints restore X Y" 'Y: unexpected argument: `confine checkpoints restore`' \
        checkpoints -w "$WS" restore X Y
    expect_refused "checkpoints list extra" 'extra: unexpected argument: `confine checkpoints list`' \
        checkpoints -w "$WS" list extra
    expect_refused "checkpoints bogus" 'bogus: unexpected argument: `confine checkpoints`' checkpoints -w "$WS" bogus
    expect_refused "checkpoints restore --frce" '--frce: unknown option of `confine checkpoints restore`; did you mean `--force`\?' \
        checkpoints -w "$WS" restore --frce
    expect_refused "checkpoints --workspce" '--workspce: unknown option of `confine checkpoints`; did you mean `--workspace`\?' \
        checkpoints --workspce "$WS"
    # The subcommands that run a command, and the main command, as before: an unknown option before the command.
    expect_refused "explain --jsn" '--jsn: unknown option of `confine explain`; did you mean `--json`\?.*after `--`' \
        explain -w "$WS" --jsn -- touch "$marker"
    expect_refused "--chekpoint" '--chekpoint: unknown option of `confine`; did you mean `--checkpoint`\?.*after `--`' \
        -w "$WS" --chekpoint -- touch "$marker"

    # --profile: the closest built-in name, or the closest of your own profiles.
    expect_refused "--profile codx" 'no profile named `codx`.*; did you mean `codex`\?$' \
        -w "$WS" --profile codx -- touch "$marker"
    mkdir -p "$H/.config/confine/profiles"
    printf 'format = "confine-profile/1"\ndescription = "mine"\n' >"$H/.config/confine/profiles/my-agent.toml"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$H/.config"
    expect_refused "--profile my-agnt" 'no profile named `my-agnt`.*; did you mean `my-agent`\?$' \
        -w "$WS" --profile my-agnt -- touch "$marker"
    expect_refused "--profile far off" 'no profile named `zzzzzz` [^;]*$' -w "$WS" --profile zzzzzz -- touch "$marker"
    chmod 0755 "$V"

    # Controls: the same subcommands with only what they take work.
    try sb probe --json
    expect_eq "$RC" 0 "control: probe --json ($(last))"
    try sb checkpoints -w "$WS"
    expect_eq "$RC" 0 "control: checkpoints -w ($(last))"
    try sb -w "$WS" --profile my-agent -- true
    expect_eq "$RC" 0 "control: --profile my-agent ($(last))"
}
run_variants scenario
