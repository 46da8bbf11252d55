#!/bin/bash
# The scripts run inside the sandbox expand their own variables ($HOME there): single quotes on purpose.
# shellcheck disable=SC2016
# learn-reads: `confine learn` learns what the strict run needs of the host. A script reads ~/.config/app/config.ini
# (the port of a service), keeps state in ~/.cache/app and calls that service on the host's 127.0.0.1. The first
# learn records the config read (the sandbox does not see it: the run stops there) as an `ro` entry; learning
# again from that profile, the run goes on, and the service reached on the loopback becomes an `allow` entry by
# address, and so is the same service reached by name (localhost) through the proxy. The strict run fails
# without the printed profile and succeeds with it. A credential read is never an
# entry, nor a name in the workspace or through a link planted there, and given `--ro ~/.config/myapp`, learn never
# proposes a private ~/.config that would hide it.
. "$(dirname "$0")/lib.sh"

# app.sh in the workspace: the script learned from.
APP='set -e
port=$(sed -n "s/^port=//p" "$HOME/.config/app/config.ini")
mkdir -p "$HOME/.cache/app"
echo "port $port" >>"$HOME/.cache/app/state"
cat "$HOME/.aws/credentials" >/dev/null 2>&1 || true
python3 -c "
import socket, sys
s = socket.create_connection((\"127.0.0.1\", int(sys.argv[1])), timeout=10)
s.sendall(b\"GET /ping HTTP/1.0\\r\\n\\r\\n\")
print(s.makefile(\"rb\").read().decode().split(\"\\r\\n\\r\\n\", 1)[1].strip())
" "$port"'

# learn ARGS...: confine learn as the variant's user; the profile (stdout) is saved to $V/learned-$RANDOM.toml,
# path in PROFILE.
learn() {
    try sb learn -w "$WS" "$@"
    PROFILE=$V/learned-$RANDOM.toml
    printf '%s\n' "$OUT" >"$PROFILE"
    chmod 0644 "$PROFILE"
}

scenario() {
    local port pong i
    port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    pong=pong-$RANDOM$RANDOM
    mkdir -p "$V/site"
    echo "$pong" >"$V/site/ping"
    bg /usr/bin/python3 -m http.server --bind 127.0.0.1 "$port" --directory "$V/site"
    for ((i = 0; i < 100; i++)); do
        /usr/bin/python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)' "$port" 2>/dev/null && break
        sleep 0.05
    done
    host mkdir -p "$H/.config/app"
    host sh -c 'echo "port=$1" >"$HOME/.config/app/config.ini"' sh "$port"
    host sh -c 'printf "%s\n" "$1" >"$2/app.sh"' sh "$APP" "$WS"

    # --- first pass: the config, which the sandbox does not show, becomes an ro entry ---------------------------
    learn -- sh app.sh
    [[ $RC != 0 ]] || fail "the first learn run read the host's config: $(last)"
    grep -q "after looking for 1 host file the sandbox did not show (the profile names it): to learn what comes after, learn again from the printed profile (confine learn --profile FILE)" "$T/.err" ||
        fail "the first learn did not say how to learn what comes after the missing config: $(last)"
    expect_match "$OUT" $'# read ~/.config/app/config.ini, which the sandbox does not show\n    "~/.config/app/config.ini",' \
        "the config read is an ro entry of the file itself"
    expect_no_match "$OUT" $'\n    "~"|"~/.config",|"/",' "no entry wider than what was read"
    local first=$PROFILE

    # --- second pass, from the first profile: the config is there, the service is reached --------------------------
    learn --profile "$first" -- sh app.sh
    expect_eq "$RC" 0 "learn from the first profile ($(last))"
    grep -q "^$pong\$" "$T/.err" || fail "the service's answer did not reach stderr: $(last)"
    expect_match "$OUT" "# reached 127.0.0.1:$port ×1, a service on this machine's loopback"$'\n    "127.0.0.1:'"$port"'",' \
        "the loopback service is allowed by address"
    expect_match "$OUT" $'\nmode = "proxy"\n' "through the proxy"
    expect_match "$OUT" $'\nprivate = \\[\n    # wrote 1 file there \\(~/.cache/app/state\\)[^\n]*\n    "~/.cache/app",' \
        "the state kept in ~/.cache/app is kept"
    expect_no_match "$OUT" $'\n    "~/.aws' "a credential read is never an entry"
    expect_match "$OUT" 'read ~/.aws/credentials, which may hold a credential: not added' "the credential read is named"

    # --- the strict run: fails without the printed profile, succeeds with it --------------------------------------
    OPTS=()
    sandbox sh app.sh
    [[ $RC != 0 ]] || fail "the strict run without the learned profile succeeded: $(last)"
    OPTS=(--profile "$PROFILE")
    sandbox sh app.sh
    expect_eq "$RC:$OUT" "0:$pong" "the strict run with the learned profile ($(last))"
    OPTS=(--profile "$first")
    sandbox sh app.sh
    [[ $RC != 0 ]] || fail "the strict run with the first profile alone reached the service: $(last)"

    # --- the same service by name, through the proxy: learned as the address it reached ---------------------------
    learn -- curl -sS "http://localhost:$port/ping"
    expect_eq "$RC" 0 "learn of curl http://localhost:$port ($(last))"
    expect_match "$OUT" $'\n    "127.0.0.1:'"$port"'",' "localhost reached through the proxy is allowed by the address it reached"
    OPTS=()
    sandbox curl -sS "http://localhost:$port/ping"
    [[ $RC != 0 ]] || fail "the strict run reached localhost:$port without the learned profile: $(last)"
    OPTS=(--profile "$PROFILE")
    sandbox curl -sS "http://localhost:$port/ping"
    expect_eq "$RC:$OUT" "0:$pong" "curl http://localhost:$port under the learned profile ($(last))"

    # --- the workspace is never proposed, nor a link the sandbox planted there to a host file -------------------
    learn -- sh -c 'cat app.sh >/dev/null; ln -s "$HOME/.config/app" lnk; cat lnk/config.ini; cat "$PWD/lnk/../lnk/config.ini"'
    expect_no_match "$OUT" $'\nro = ' "learn proposed an ro entry for a name in the workspace or through a planted link"
    rm -f "$WS/lnk"

    # --- a directory the user bound is never hidden -----------------------------------------------------------------
    host mkdir -p "$H/.config/myapp"
    host sh -c 'echo mine >"$HOME/.config/myapp/settings"'
    learn --ro "$H/.config/myapp" -- sh -c 'cat "$HOME/.config/myapp/settings"; echo x >"$HOME/.config/x"; mkdir -p "$HOME/.config/other"; echo y >"$HOME/.config/other/y"'
    expect_eq "$RC" 0 "learn with --ro ~/.config/myapp ($(last))"
    expect_no_match "$OUT" $'\n    "~/.config",' "learn proposed a private ~/.config, which would hide the bound ~/.config/myapp"
    expect_match "$OUT" $'\n    "~/.config/other",' "what the run wrote beside it is kept"
    expect_match "$OUT" 'not kept: a private ~/.config would hide ~/.config/myapp' "the write that cannot be kept is named"
    OPTS=(--ro "$H/.config/myapp" --profile "$PROFILE")
    sandbox cat "$H/.config/myapp/settings"
    expect_eq "$RC:$OUT" "0:mine" "the bound directory, with the learned profile ($(last))"
}
run_variants scenario
