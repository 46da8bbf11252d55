#!/bin/bash
# messages-cause: an error or note points at its cause. A first word one typo from a subcommand is refused with the
# subcommand (exit 125, nothing run) unless a program of that name is on PATH; a profile's bad value or unknown key
# names the file, the line and the key (with the closest key); --net over a profile's proxy says which of the
# profile's settings are set aside, instead of an error about flags the user never gave; a profile's allow_nested
# is said with -v only, naming the profile; `confine run` errors carry one prefix; fallback explain shows the
# caller's own uid.
# shellcheck disable=SC2016 # backquotes in the expected messages are literal
. "$(dirname "$0")/lib.sh"

scenario() {
    local marker=$WS/ran   # where a command that wrongly runs leaves its mark (the workspace: any variant writes it)

    # A mistyped subcommand: refused with the one meant, the command never run.
    expect_refused "confine exlpain" '^confine: exlpain: not a confine subcommand; did you mean `confine explain`\?' \
        exlpain -w "$WS" -- touch "$marker"
    expect_refused "confine checkpoint list" 'checkpoint: not a confine subcommand; did you mean `confine checkpoints`\?' \
        checkpoint list
    expect_refused "confine lern" 'did you mean `confine learn`\?' lern -- touch "$marker"
    [[ ! -e $marker ]] || fail "a mistyped subcommand ran the command"
    # Controls: after `--` the word is the command (not found inside: 127); a program of that name on PATH runs.
    try sb -w "$WS" -- exlpain
    expect_eq "$RC" 127 "control: confine -- exlpain runs it ($(last))"
    mkdir -p "$WS/bin"
    printf '#!/bin/sh\ntouch %s\n' "$WS/probes-ran" >"$WS/bin/probes"
    chmod 0755 "$WS/bin/probes"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$WS/bin"
    XENV=(PATH="$WS/bin:$SANE_PATH")
    try sb -w "$WS" probes
    XENV=()
    expect_eq "$RC" 0 "control: a program named probes on PATH runs ($(last))"
    [[ -e $WS/probes-ran ]] || fail "control: the program probes did not run"

    # A profile's value: its file, line and key, not a flag the user never typed.
    local p=$H/.config/confine/profiles
    mkdir -p "$p"
    printf 'format = "confine-profile/1"\n[limits]\nmemory = "4 GB"\n' >"$p/mem.toml"
    printf 'format = "confine-profile/1"\n[limits]\nmemroy = "4g"\n' >"$p/typo.toml"
    printf 'format = "confine-profile/1"\n[network]\nmode = "bridge"\n' >"$p/bridge.toml"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$H/.config"
    expect_refused "profile memory = \"4 GB\"" "^confine: $p/mem.toml:3: \`limits.memory\` \`4 GB\`: unknown unit" \
        -w "$WS" --profile "$p/mem.toml" -- touch "$marker"
    expect_refused "profile network.mode = \"bridge\"" "^confine: $p/bridge.toml:3: \`network.mode\` \`bridge\`: expected \`none\`, \`proxy\`, \`veth\` or \`host\`\$" \
        -w "$WS" --profile "$p/bridge.toml" -- touch "$marker"
    try sb -w "$WS" --profile "$p/typo.toml" -- touch "$marker"
    expect_eq "$RC" 125 "unknown profile key: exit status ($(last))"
    expect_match "$ERRS" "$p/typo.toml:3: unknown key \`limits.memroy\`; did you mean \`limits.memory\`\?" \
        "unknown profile key: file, line and the closest key"
    [[ ! -e $marker ]] || fail "the command ran with a bad profile"
    # Control: the command line's own bad value still names the flag.
    expect_refused "--memory 4x" '^confine: --memory `4x`: unknown unit' -w "$WS" --memory 4x -- touch "$marker"
    [[ ! -e $marker ]] || fail "a bad limit ran the command"

    # --net none over a profile that uses the proxy: the command line wins, one line says what is set aside.
    try sb -w "$WS" --profile codex --net none -- true
    expect_eq "$RC" 0 "--profile codex --net none runs ($(last))"
    expect_match "$ERRS" '--net none replaces profile `codex`.s network.mode = "proxy" \(built-in:codex:[0-9]+\): its allowed hosts' \
        "--profile codex --net none: says which setting the flag replaced"
    expect_no_match "$ERRS" '--allow' "--profile codex --net none: no error about --allow, which was not given"
    # A profile's allow_nested: nothing at the normal level, the profile named with -v.
    try sb -w "$WS" --profile codex -- true
    expect_eq "$RC" 0 "--profile codex runs ($(last))"
    expect_no_match "$ERRS" 'allow-nested|allow_nested' "--profile codex: no warning for a flag the user never gave"
    try sb -v -w "$WS" --profile codex -- true
    expect_match "$ERRS" 'profile `codex` sets sandbox.allow_nested' "--profile codex -v: the profile's key is named"
    # Control: the flag itself still warns.
    try sb -w "$WS" --allow-nested -- true
    expect_match "$ERRS" 'warning: --allow-nested' "control: --allow-nested on the command line warns"

    # confine run: one prefix.
    try sb run --bogus-flag img true
    expect_eq "$RC" 125 "confine run --bogus-flag: exit status ($(last))"
    expect_match "$ERRS" '^confine: --bogus-flag: not a docker run flag' "confine run: one prefix"
    expect_no_match "$ERRS" 'confine: confine run' "confine run: no double prefix"

    # A command not found inside: whether the host has it, outside the sandbox's view, or it is there but its
    # interpreter is not; each exit 127.
    mkdir -p "$V/tools"
    printf '#!/bin/sh\ntrue\n' >"$V/tools/outside.sh"
    chmod 0755 "$V/tools" "$V/tools/outside.sh"
    try sb -w "$WS" -- "$V/tools/outside.sh"
    expect_eq "$RC" 127 "a script outside the workspace: exit status ($(last))"
    expect_match "$ERRS" "the host has it at $V/tools/outside.sh, outside what the sandbox sees \\(--ro $V/tools would show it\\)" \
        "a script outside the workspace: where the host has it"
    printf '#!/nonexistent/interpreter\n' >"$WS/no-interpreter.sh"
    chmod 0755 "$WS/no-interpreter.sh"
    try sb -w "$WS" -- ./no-interpreter.sh
    expect_eq "$RC" 127 "a script whose interpreter is missing: exit status ($(last))"
    expect_match "$ERRS" 'the interpreter its first line \(#!\) names is not in the sandbox' "a missing interpreter is named as such"
    try sb -w "$WS" -- no-such-command-anywhere
    expect_eq "$RC" 127 "a command nowhere: exit status ($(last))"
    expect_match "$ERRS" 'command not found \(in the sandbox, nor on the host\)' "a command nowhere: said so"
    # Control: given the directory, the same script runs.
    try sb -w "$WS" --ro "$V/tools" -- "$V/tools/outside.sh"
    expect_eq "$RC" 0 "control: --ro shows the script ($(last))"

    # --ro of a directory that holds the sandbox's $HOME: the run starts (the home is the sandbox's own, the host's
    # key never shows), and a key elsewhere in that directory is still masked.
    mkdir -p "$V/tools/.ssh"
    echo "TOOLS-KEY-CANARY" >"$V/tools/.ssh/id_rsa"
    try sb -w "$WS" --ro "$V" -- sh -c "cat $V/tools/.ssh/id_rsa $H/.ssh/id_rsa 2>/dev/null; true"
    expect_eq "$RC" 0 "--ro of the parent of \$HOME starts ($(last))"
    expect_no_match "$OUT" "TOOLS-KEY-CANARY|$SSH_CANARY" "--ro of the parent of \$HOME: no key read"

    # A refused write to .git/config (read-only here: git's rename over it fails with EBUSY and git says only
    # that) is recorded with the flag that allows it, in the denial log and the exit summary.
    host git init -q "$WS"
    try sb -w "$WS" -- sh -c 'git config user.email agent@example.invalid; echo "git=$?"; sleep 0.2; cat /run/confine/denials.jsonl'
    expect_match "$OUT" 'git=[1-9]' "git config inside fails (the config is read-only)"
    expect_match "$OUT" '"layer":"git-config","action":"refused","what":".git/config".*"allow_with":"--allow-git-config"' \
        "the denial log names the refused config write and --allow-git-config"
    expect_match "$ERRS" "refused: .*read-only config \\(--allow-git-config allows them\\) .git/config" \
        "the exit summary names --allow-git-config"
    [[ -z $(git config --file "$WS/.git/config" --get user.email) ]] || fail "the config was written on the host"
    # Control: with --allow-git-config the write succeeds and nothing is recorded.
    try sb -w "$WS" --allow-git-config -- sh -c 'git config user.email agent@example.invalid; echo "git=$?"'
    expect_match "$OUT" 'git=0' "control: --allow-git-config lets git write its config ($(last))"
    expect_no_match "$ERRS" 'git-config|read-only config' "control: nothing recorded"

    # Fallback explain: the identity is the caller's (root's 0, the user's own uid).
    try sb explain --no-namespaces --best-effort -w "$WS" -- true
    expect_match "$OUT" "identity +host uid $VUID gid $VGID \\(no user namespace\\)" "fallback explain: host uid $VUID"
}
run_variants scenario
