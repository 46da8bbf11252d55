#!/bin/bash
# secret-agents: the real `codex exec` and `claude -p` reach an API with only a placeholder key inside. A mock of
# the OpenAI Responses API and the Anthropic Messages API listens over TLS on the host's loopback (its certificate
# from a test CA that confine trusts through SSL_CERT_FILE) and answers only requests that carry the real key;
# inside, the agent holds a placeholder and talks plain HTTP to a --broker endpoint, which confine forwards over
# verified TLS, putting the real key into the header. The agent's answer is the mock's, the mock saw the real key,
# and the key is nowhere in the sandbox's environment. The claude profile does the same by itself with the
# caller's ANTHROPIC_API_KEY (its [credentials]), and brokers it to the caller's own ANTHROPIC_BASE_URL (a gateway over https)
# when that is set; a plain-HTTP endpoint off this machine is refused (secret-broker: one on this machine).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-agents.sh"
. "$(dirname "$0")/lib-tls.sh"

install_agents
SB_TIMEOUT=150  # codex tries a WebSocket first, and falls back to HTTPS after a few retries

# The mock's log: how many POSTs to PATH carried the real key (true) or not (false).
posts_to() { grep '"method": "POST"' "$MOCK_LOG" | grep -c "\"path\": \"$1[^\"]*\".*\"key_ok\": $2" || true; }

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

    # The user's own endpoint (a gateway: here the mock, over https): with ANTHROPIC_BASE_URL pointing there, the
    # claude profile alone brokers the key to it, with no flag of the user's; the agent holds the placeholder.
    XENV=(ANTHROPIC_API_KEY="$real" ANTHROPIC_BASE_URL="https://127.0.0.1:$MOCK_PORT/" SSL_CERT_FILE="$certs/ca.pem")
    OPTS=(--profile claude --ro "$AGENTS")
    : >"$MOCK_LOG"
    sandbox "$bin/claude" -p "Answer with the word the server gives you."
    expect_eq "$RC" 0 "claude -p to the user's own endpoint ($(last))"
    expect_match "$OUT" 'MOCK-REPLY-OK' "claude printed the answer of the user's endpoint ($(last))"
    expect_match "$ERRS" "ANTHROPIC_BASE_URL is yours \\(https://127.0.0.1:$MOCK_PORT/\\): profile .claude. brokers its key to 127.0.0.1:$MOCK_PORT" \
        "confine says the user's endpoint replaces the profile's"
    expect_match "$(posts_to /v1/messages true)" '^[1-9]' "the user's endpoint got the real key ($(cat "$MOCK_LOG"))"
    expect_eq "$(posts_to /v1/messages false)" 0 "the user's endpoint never got the placeholder"
    sandbox /bin/sh -c 'echo "$ANTHROPIC_BASE_URL"; env | grep -c -e "'"$real"'"'
    expect_eq "$OUT" $'http://127.0.0.1:14001\n0' "inside: the broker's address, and no real key ($(last))"
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
