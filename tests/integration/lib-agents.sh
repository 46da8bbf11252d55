# shellcheck shell=bash
# lib-agents.sh: the real agents for the profile-agents and secret-agents tests. Source it after lib.sh; it
# installs OpenAI's Codex CLI and Anthropic's Claude Code from npm once, cached in $CONFINE_AGENTS_DIR (default
# /tmp/confine-agents-v1, world-readable), and sets $AGENTS to that directory.

AGENTS=${CONFINE_AGENTS_DIR:-/tmp/confine-agents-v1}

install_agents() {
    [[ -x $AGENTS/node_modules/.bin/codex && -x $AGENTS/node_modules/.bin/claude ]] && return 0
    command -v npm >/dev/null || skip "npm is not installed (apt-get install npm)"
    [[ $(id -u) == 0 ]] || skip "the agents are installed by root into $AGENTS"
    mkdir -p "$AGENTS.tmp"
    npm install --no-audit --no-fund --prefix "$AGENTS.tmp" @openai/codex @anthropic-ai/claude-code \
        >"$T/npm.log" 2>&1 || { tail -5 "$T/npm.log"; skip "npm install of the agents failed (no registry access?)"; }
    chmod -R a+rX "$AGENTS.tmp"
    rm -rf "$AGENTS" && mv "$AGENTS.tmp" "$AGENTS"
}
