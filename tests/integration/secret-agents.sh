#!/bin/bash
# secret-agents: the real `codex exec` and `claude -p` reach an API with only a placeholder key inside. A mock of
# the OpenAI Responses API and the Anthropic Messages API listens over TLS on the host's loopback (its certificate
# from a test CA that confine trusts through SSL_CERT_FILE) and answers only requests that carry the real key;
# inside, the agent holds a placeholder and talks plain HTTP to a --broker endpoint, which confine forwards over
# verified TLS, putting the real key into the header. The agent's answer is the mock's, the mock saw the real key,
# and the key is nowhere in the sandbox's environment. The claude profile does the same by itself with the
# caller's ANTHROPIC_API_KEY (its [credentials]), and brokers it to the caller's own ANTHROPIC_BASE_URL (a gateway over https)
# when that is set; a plain-HTTP endpoint off this machine is refused (secret-broker: one on this machine). The codex
# profile does the same with the endpoint and the model providers the user set in ~/.codex/config.toml.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-agents.sh"
. "$(dirname "$0")/lib-tls.sh"

install_agents
SB_TIMEOUT=150  # codex tries a WebSocket first, and falls back to HTTPS after a few retries

# The mock's log: how many POSTs to PATH carried the real key (true) or not (false).
posts_to() { grep '"method": "POST"' "$MOCK_LOG" | grep -c "\"path\": \"$1[^\"]*\".*\"key_ok\": $2" || true; }

# claude_to_users_endpoint CLAUDE: the user's own endpoint (a gateway: here the mock, over https): with
# ANTHROPIC_BASE_URL pointing there, the claude profile alone brokers the key to it, with no flag of the user's;
# the agent holds the placeholder.
claude_to_users_endpoint() {
    local claude=$1 version
    version=$("$claude" --version)
    XENV=(ANTHROPIC_API_KEY="$real" ANTHROPIC_BASE_URL="https://127.0.0.1:$MOCK_PORT/" SSL_CERT_FILE="$certs/ca.pem")
    OPTS=(--profile claude --ro "$AGENTS")
    : >"$MOCK_LOG"
    sandbox "$claude" -p "Answer with the word the server gives you."
    expect_eq "$RC" 0 "claude -p to the user's own endpoint [$version] ($(last))"
    expect_match "$OUT" 'MOCK-REPLY-OK' "claude printed the answer of the user's endpoint [$version] ($(last))"
    expect_match "$ERRS" "ANTHROPIC_BASE_URL is yours \\(https://127.0.0.1:$MOCK_PORT/\\): profile .claude. brokers its key to 127.0.0.1:$MOCK_PORT" \
        "confine says the user's endpoint replaces the profile's"
    expect_match "$(posts_to /v1/messages true)" '^[1-9]' "the user's endpoint got the real key ($(cat "$MOCK_LOG"))"
    expect_eq "$(posts_to /v1/messages false)" 0 "the user's endpoint never got the placeholder"
    sandbox /bin/sh -c 'echo "$ANTHROPIC_BASE_URL"; env | grep -c -e "'"$real"'"'
    expect_eq "$OUT" $'http://127.0.0.1:14001\n0' "inside: the broker's address, and no real key [$version] ($(last))"
}

scenario() {
    local bin=$AGENTS/node_modules/.bin certs=$V/certs real="sk-REAL-$RANDOM$RANDOM$RANDOM"
    mkdir -m 0700 "$H/.codex" "$H/.claude"
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$H/.codex" "$H/.claude"
    mkdir -m 0755 "$certs"
    make_certificates "$certs"
    MOCK_LOG=$V/mock.jsonl
    start_server_script agent-mock-api.py "$MOCK_LOG" "$real" --tls "$certs/good.pem" "$certs/good.key" --lifetime 600
    local upstream=(--allow "127.0.0.1:$MOCK_PORT")
    XENV=(REAL_SOURCE="$real" SSL_CERT_FILE="$certs/ca.pem")

    # codex exec: this codex reads its API key from CODEX_API_KEY and its base URL from its config.
    OPTS=(--profile codex --ro "$AGENTS" "${upstream[@]}" --secret CODEX_API_KEY=env:REAL_SOURCE --for 127.0.0.1
        --broker "14100=https://127.0.0.1:$MOCK_PORT")
    sandbox "$bin/codex" exec --skip-git-repo-check -c 'openai_base_url="http://127.0.0.1:14100/v1"' \
        "Answer with the word the server gives you."
    expect_eq "$RC" 0 "codex exec through the broker ($(last))"
    expect_match "$OUT" 'MOCK-REPLY-OK' "codex printed the mock's answer ($(last))"
    expect_match "$(posts_to /v1/responses true)" '^[1-9]' "the mock got the real key from codex ($(cat "$MOCK_LOG"))"
    expect_eq "$(posts_to /v1/responses false)" 0 "no request without the real key"

    # Codex with the user's own endpoint, set where Codex reads it: `openai_base_url` in ~/.codex/config.toml (over
    # https: the mock), and only --profile codex. The key goes there, the sandbox's copy of config.toml names the
    # broker, and the host's file is the same after a run that rewrote its copy to point elsewhere.
    printf '# mine\nopenai_base_url = "https://127.0.0.1:%s/v1"\n' "$MOCK_PORT" >"$H/.codex/config.toml"
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$H/.codex/config.toml"
    cp "$H/.codex/config.toml" "$V/config.before"
    XENV=(CODEX_API_KEY="$real" SSL_CERT_FILE="$certs/ca.pem")
    OPTS=(--profile codex --ro "$AGENTS")
    : >"$MOCK_LOG"
    sandbox "$bin/codex" exec --skip-git-repo-check "Answer with the word the server gives you."
    expect_eq "$RC" 0 "codex exec to the endpoint in its config.toml ($(last))"
    expect_match "$OUT" 'MOCK-REPLY-OK' "codex printed the answer of the user's endpoint ($(last))"
    expect_match "$ERRS" "openai_base_url. in $H/.codex/config.toml is yours \\(https://127.0.0.1:$MOCK_PORT/v1\\)" \
        "confine says the user's endpoint replaces the profile's"
    expect_match "$(posts_to /v1/responses true)" '^[1-9]' "the user's endpoint got the real key ($(cat "$MOCK_LOG"))"
    expect_eq "$(posts_to /v1/responses false)" 0 "the user's endpoint never got the placeholder"
    sandbox /bin/sh -c 'grep openai_base_url ~/.codex/config.toml; env | grep -c -e "'"$real"'"
                        echo "openai_base_url = \"http://attacker.example/v1\"" >~/.codex/config.toml'
    expect_eq "$OUT" $'openai_base_url = \'http://127.0.0.1:14000/v1\'\n0' "inside: the copy names the broker ($(last))"
    expect_eq "$(cmp "$V/config.before" "$H/.codex/config.toml" && echo same)" same "the host's config.toml is unchanged"

    # The user's own model provider ([model_providers.gw] with its env_key): brokered to its base_url in the same way.
    printf 'model_provider = "gw"\n[model_providers.gw]\nname = "gateway"\nbase_url = "https://127.0.0.1:%s/v1"\nenv_key = "GW_KEY"\nwire_api = "responses"\n' \
        "$MOCK_PORT" >"$H/.codex/config.toml"
    XENV=(GW_KEY="$real" SSL_CERT_FILE="$certs/ca.pem")
    : >"$MOCK_LOG"
    sandbox "$bin/codex" exec --skip-git-repo-check "Answer with the word the server gives you."
    expect_eq "$RC" 0 "codex exec through the user's provider ($(last))"
    expect_match "$OUT" 'MOCK-REPLY-OK' "codex printed the answer of the user's provider ($(last))"
    expect_match "$ERRS" "provider .gw. \\(https://127.0.0.1:$MOCK_PORT/v1\\) is yours: profile .codex. brokers GW_KEY" \
        "confine says which provider it brokers"
    expect_match "$(posts_to /v1/responses true)" '^[1-9]' "the provider got the real key ($(cat "$MOCK_LOG"))"
    expect_eq "$(posts_to /v1/responses false)" 0 "the provider never got the placeholder"
    sandbox /bin/sh -c 'echo "$GW_KEY" | grep -c confine-placeholder-; grep -c "127.0.0.1:14010/v1" ~/.codex/config.toml'
    expect_eq "$OUT" $'1\n1' "inside: GW_KEY is a placeholder, the provider's base_url the broker ($(last))"
    rm "$H/.codex/config.toml"
    XENV=(REAL_SOURCE="$real" SSL_CERT_FILE="$certs/ca.pem")

    # claude -p, with the profile's own [credentials]: the caller's ANTHROPIC_API_KEY becomes a placeholder and
    # ANTHROPIC_BASE_URL the profile's broker (at api.anthropic.com, which this test does not reach)...
    XENV+=(ANTHROPIC_API_KEY="$real")
    OPTS=(--profile claude --ro "$AGENTS")
    sandbox /bin/sh -c 'echo "$ANTHROPIC_BASE_URL $ANTHROPIC_API_KEY"; env | grep -c -e "'"$real"'"'
    expect_match "$OUT" '^http://127.0.0.1:14001 confine-placeholder-[0-9a-f]{64}'$'\n''0$' \
        "the claude profile brokers the caller's key ($(last))"
    # ... so the test points the same setup at the mock instead.
    OPTS=(--profile claude --ro "$AGENTS" "${upstream[@]}" --secret ANTHROPIC_API_KEY=env:REAL_SOURCE --for 127.0.0.1
        --broker "14101=https://127.0.0.1:$MOCK_PORT" --env ANTHROPIC_BASE_URL=http://127.0.0.1:14101)
    : >"$MOCK_LOG"
    sandbox "$bin/claude" -p "Answer with the word the server gives you."
    expect_eq "$RC" 0 "claude -p through the broker ($(last))"
    expect_match "$OUT" 'MOCK-REPLY-OK' "claude printed the mock's answer ($(last))"
    expect_match "$(posts_to /v1/messages true)" '^[1-9]' "the mock got the real key from claude ($(cat "$MOCK_LOG"))"
    expect_eq "$(posts_to /v1/messages false)" 0 "no request without the real key"
    sandbox /bin/sh -c 'env | grep -c -e "'"$real"'"; cat /proc/self/environ | grep -a -c -e "'"$real"'"'
    expect_eq "$OUT" $'0\n0' "the real key is not inside ($(last))"

    # The user's own endpoint, with the newest Claude Code and the one the profile was first measured with.
    for claude in "${CLAUDES[@]}"; do claude_to_users_endpoint "$claude"; done
    # The same given with --env: the command line's value is the endpoint.
    XENV=(ANTHROPIC_API_KEY="$real" SSL_CERT_FILE="$certs/ca.pem")
    OPTS=(--profile claude --ro "$AGENTS" --env "ANTHROPIC_BASE_URL=https://127.0.0.1:$MOCK_PORT")
    : >"$MOCK_LOG"
    sandbox "$bin/claude" -p "Answer with the word the server gives you."
    expect_match "$OUT" 'MOCK-REPLY-OK' "--env ANTHROPIC_BASE_URL: claude reached it ($(last))"
    expect_match "$(posts_to /v1/messages true)" '^[1-9]' "--env ANTHROPIC_BASE_URL: the real key arrived"
    expect_eq "$(posts_to /v1/messages false)" 0 "--env ANTHROPIC_BASE_URL: never the placeholder"
    # Attack: a plain-HTTP endpoint off this machine would carry the key in clear: refused before the run.
    XENV=(ANTHROPIC_API_KEY="$real" ANTHROPIC_BASE_URL="http://gateway.example.invalid:$MOCK_PORT")
    OPTS=(--profile claude --ro "$AGENTS")
    : >"$MOCK_LOG"
    sandbox "$bin/claude" -p "hello"
    expect_eq "$RC" 125 "a plain-HTTP endpoint is refused ($(last))"
    expect_match "$ERRS" 'gives its key in clear only to this machine' "the refusal says why"
    expect_eq "$(wc -l <"$MOCK_LOG")" 0 "nothing reached the endpoint"
}
run_variants scenario
