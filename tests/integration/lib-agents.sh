# shellcheck shell=bash
# lib-agents.sh: the real agents for the profile-agents and secret-agents tests. Source it after lib.sh; it
# installs the newest OpenAI Codex CLI and Anthropic Claude Code from npm once, with the Claude Code the claude
# profile was first measured with beside them, cached in $CONFINE_AGENTS_DIR (default /tmp/confine-agents-v2,
# world-readable); it sets $AGENTS to that directory and $CLAUDES to both claude programs, newest first.

AGENTS=${CONFINE_AGENTS_DIR:-/tmp/confine-agents-v2}
CLAUDE_MEASURED=2.1.197
CLAUDES=("$AGENTS/node_modules/.bin/claude" "$AGENTS/claude-$CLAUDE_MEASURED/node_modules/.bin/claude")

install_agents() {
    [[ -x $AGENTS/node_modules/.bin/codex && -x ${CLAUDES[0]} && -x ${CLAUDES[1]} ]] && return 0
    command -v npm >/dev/null || skip "npm is not installed (apt-get install npm)"
    [[ $(id -u) == 0 ]] || skip "the agents are installed by root into $AGENTS"
    mkdir -p "$AGENTS.tmp"
    # @latest said outright: without it npm may settle for an older version it has cached.
    { npm install --no-audit --no-fund --prefix "$AGENTS.tmp" @openai/codex@latest @anthropic-ai/claude-code@latest &&
        npm install --no-audit --no-fund --prefix "$AGENTS.tmp/claude-$CLAUDE_MEASURED" "@anthropic-ai/claude-code@$CLAUDE_MEASURED"; } \
        >"$T/npm.log" 2>&1 || { tail -5 "$T/npm.log"; skip "npm install of the agents failed (no registry access?)"; }
    chmod -R a+rX "$AGENTS.tmp"
    rm -rf "$AGENTS" && mv "$AGENTS.tmp" "$AGENTS"
}
