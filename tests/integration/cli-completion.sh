#!/bin/bash
# cli-completion: the shell completions offer your own profiles after --profile (those in
# $XDG_CONFIG_HOME/confine/profiles, default ~/.config/confine/profiles) beside the built-in ones, complete the
# command after an option's value, and offer `confine run` docker's flags. bash: the completion function itself,
# sourced with bash-completion and called with COMP_WORDS set; fish: `complete -C`. (Which flags each file
# offers is the flag-docs test's.)
. "$(dirname "$0")/lib.sh"

# World-readable copies, for the user variant; an empty working directory, since --profile also offers the .toml
# files and the directories there.
COMPLETIONS=$T/completions
mkdir -p "$COMPLETIONS" "$T/cwd"
cp "$TESTS_DIR"/../../completions/confine.bash "$TESTS_DIR"/../../completions/confine.fish "$COMPLETIONS/"

# complete_bash WORD...: what bash offers for the last WORD of `WORD...`, one per line, run as the variant's user
# with only HOME (and XENV) from the environment.
complete_bash() {
    (cd "$T/cwd" && host env -i HOME="$H" PATH="$SANE_PATH" "${XENV[@]}" bash -c '
        source /usr/share/bash-completion/bash_completion
        source "$1"
        shift
        COMP_WORDS=("$@")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE="${COMP_WORDS[*]}"
        COMP_POINT=${#COMP_LINE}
        _confine
        printf "%s\n" "${COMPREPLY[@]}"' bash "$COMPLETIONS/confine.bash" "$@")
}

complete_fish() {
    (cd "$T/cwd" && host env -i HOME="$H" PATH="$SANE_PATH" "${XENV[@]}" fish --no-config \
        -c 'source $argv[1]; complete -C $argv[2]' "$COMPLETIONS/confine.fish" "$*")
}

add_profile() {
    mkdir -p "$1"
    printf 'format = "confine-profile/1"\n' >"$1/$2.toml"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$H"
}

scenario() {
    [[ -f /usr/share/bash-completion/bash_completion ]] ||
        skip "bash-completion is not installed (scripts/bootstrap --tests installs it)"
    command -v fish >/dev/null || skip "fish is not installed (scripts/bootstrap --tests installs it)"
    add_profile "$H/.config/confine/profiles" my-agent
    add_profile "$V/xdg/confine/profiles" other-agent
    mkdir -p "$H/.config/confine/profiles/not-a-profile.toml.d"

    try complete_bash confine --profile my
    expect_eq "$RC" 0 "bash: completing --profile my ($(last))"
    expect_eq "$OUT" my-agent "bash: --profile my offers your profile"
    try complete_bash confine --profile co
    expect_eq "$OUT" codex "bash: --profile co offers the built-in one"
    try complete_bash confine explain --profile my
    expect_eq "$OUT" my-agent "bash: explain --profile my offers your profile"
    try complete_bash confine --profile ''
    grep -qx my-agent <<<"$OUT" || fail "bash: --profile offers your profile among all ($(last))"
    grep -qx default <<<"$OUT" || fail "bash: --profile offers the built-in ones among all ($(last))"
    expect_no_match "$OUT" "other-agent" "bash: a profile outside the profile directory"

    try complete_fish confine --profile my
    expect_eq "$RC" 0 "fish: completing --profile my ($(last))"
    expect_match "$OUT" "^my-agent"$'(\t|$)' "fish: --profile my offers your profile"

    # The word after an option that takes a value is that value, not the command: the command comes after it.
    try complete_bash confine --scan-skip node_modules --tmpfs-size 1g ech
    grep -qx echo <<<"$OUT" || fail "bash: the command after --scan-skip NAME --tmpfs-size SIZE ($(last))"
    try complete_fish confine --worktree agent --shm-size 64m ech
    expect_match "$OUT" "^echo"$'(\t|$)' "fish: the command after --worktree BRANCH --shm-size SIZE"
    # confine run offers docker's flags, not confine's.
    try complete_bash confine run --shm
    expect_eq "$OUT" --shm-size "bash: confine run --shm"
    try complete_fish confine run --vol
    expect_match "$OUT" "^--volume"$'\t' "fish: confine run --vol"
    try complete_fish confine run --scan
    expect_eq "$OUT" "" "fish: confine run offers no --scan-skip (a flag of confine's own)"
    # ... and the network modes after --network, not files.
    try complete_bash confine run --network ''
    expect_eq "$(sort <<<"$OUT" | tr '\n' ' ')" "host none proxy veth " "bash: confine run --network offers the modes"
    try complete_fish confine run --network ''
    expect_eq "$(cut -f1 <<<"$OUT" | sort | tr '\n' ' ')" "host none proxy veth " "fish: confine run --network offers the modes"

    # $XDG_CONFIG_HOME, when set, is where your profiles are.
    XENV=(XDG_CONFIG_HOME="$V/xdg")
    try complete_bash confine --profile other
    expect_eq "$OUT" other-agent "bash: a profile in \$XDG_CONFIG_HOME/confine/profiles"
    try complete_bash confine --profile my
    expect_eq "$OUT" "" "bash: ~/.config is not looked in when \$XDG_CONFIG_HOME is set"
    try complete_fish confine --profile other
    expect_match "$OUT" "^other-agent"$'(\t|$)' "fish: a profile in \$XDG_CONFIG_HOME/confine/profiles"

    # `checkpoints restore` and `rm` offer the workspace's checkpoint ids (asked of confine), not files or commands.
    mkdir -p "$V/bin"
    ln -s "$CONF" "$V/bin/confine"
    XENV=()
    OPTS=(--checkpoint)
    sandbox /bin/true
    local id
    id=$(sed -n 's/^confine: checkpoint \([^ ]*\) saved .*/\1/p' <<<"$ERRS")
    [[ -n $id ]] || fail "no checkpoint was made ($(last))"
    XENV=(PATH="$V/bin:$SANE_PATH")
    local sub
    for sub in restore rm; do
        try complete_bash confine checkpoints "$sub" -w "$WS" ''
        grep -qx "$id" <<<"$OUT" || fail "bash: checkpoints $sub offers the checkpoint id $id ($(last))"
        expect_no_match "$OUT" "^(echo|ls|bash)\$" "bash: checkpoints $sub offers no command"
        try complete_fish confine checkpoints "$sub" -w "$WS" ''
        expect_match "$OUT" "(^|"$'\n'")$id"$'\t' "fish: checkpoints $sub offers the checkpoint id"
    done
}
run_variants scenario
