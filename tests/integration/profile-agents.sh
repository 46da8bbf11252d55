#!/bin/bash
# profile-agents: the agent profiles run the real agents. OpenAI's Codex CLI and Anthropic's Claude Code are
# installed from npm (once, cached in $CONFINE_AGENTS_DIR, default /tmp/confine-agents-v2, world-readable) and run
# inside `confine --profile codex|claude`: --version and --help work with no network and no key; `codex sandbox`
# (its own bubblewrap sandbox) runs a command inside confine; the agent's state
# directories from the profile are bound read-write (a session written there from inside appears on the host, in a
# directory confine created); and the sandbox marks itself (CONFINE=1, CONFINE_PROFILE). A profile name that does
# not exist is one clear error.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-agents.sh"

install_agents

scenario() {
    local bin=$AGENTS/node_modules/.bin
    mkdir -m 0700 "$H/.codex" "$H/.claude"
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$H/.codex" "$H/.claude"

    OPTS=(--profile codex --ro "$AGENTS")
    sandbox "$bin/codex" --version
    expect_eq "$RC" 0 "codex --version under --profile codex ($(last))"
    expect_match "$OUT" '^codex-cli [0-9]+\.[0-9]+' "codex --version output ($(last))"
    sandbox "$bin/codex" --help
    expect_eq "$RC" 0 "codex --help ($(last))"
    expect_match "$OUT" 'Usage: codex' "codex --help output"
    sandbox /bin/sh -c 'echo "$CONFINE $CONFINE_PROFILE $HTTPS_PROXY"; echo state >"$HOME/.codex/sessions/from-inside"'
    expect_eq "$RC:$OUT" "0:1 codex http://127.0.0.1:3128" "marker and proxy inside --profile codex ($(last))"
    expect_eq "$(cat "$H/.codex/sessions/from-inside" 2>/dev/null)" state "~/.codex/sessions is bound read-write"
    # Codex runs each command in a bubblewrap sandbox of its own; the profile lets it (allow_nested). As root on
    # root's workspace the command would be root inside, which no nested sandbox can map: run it as another id.
    # Codex will not put its helper links in a home under the temporary directory, and this test's home is under
    # /tmp: point TMPDIR elsewhere (a real home is not under /tmp).
    [[ $VARIANT != root ]] || OPTS+=(--user 1000:1000)
    XENV=(TMPDIR=/var/tmp)
    sandbox "$bin/codex" sandbox -- /bin/sh -c 'echo "in-codex-sandbox $(readlink /proc/self/ns/mnt)"'
    expect_eq "$RC" 0 "codex sandbox under --profile codex ($(last))"
    expect_match "$OUT" '^in-codex-sandbox mnt:' "the command ran in codex's own sandbox ($(last))"
    local inner=$OUT
    sandbox /bin/sh -c 'readlink /proc/self/ns/mnt'
    [[ $OUT == mnt:* && $inner != *"$OUT"* ]] || fail "codex sandbox ran its command in confine's mount namespace ($OUT)"
    XENV=()

    OPTS=(--profile claude --ro "$AGENTS")
    local claude
    for claude in "${CLAUDES[@]}"; do  # the newest and the one the profile was first measured with
        sandbox "$claude" --version
        expect_eq "$RC" 0 "claude --version under --profile claude ($(last))"
        expect_match "$OUT" '\(Claude Code\)' "claude --version output ($(last))"
        sandbox "$claude" --help
        expect_eq "$RC" 0 "claude --help [$claude] ($(last))"
        expect_match "$OUT" 'Usage: claude' "claude --help output [$claude]"
    done
    probe read "$H/.ssh/id_rsa"
    expect_eq "$OUT" ENOENT "~/.ssh stays hidden under an agent profile ($(last))"

    OPTS=(--profile no-such-agent)
    sandbox /bin/true
    expect_eq "$RC" 125 "an unknown profile ($(last))"
    expect_match "$ERRS" 'no profile named `no-such-agent`' "the error names it ($(last))"
}
run_variants scenario
